// SPDX-License-Identifier: Apache-2.0
#pragma once

// What the keylane ways share: `settle` waits for every lane to retire and
// no key to wait for a slot (the runtime is back to idle), and `stop` ends
// the runtime and notes what it left unfinished.

#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <utility>

#include <keylane/stats.hpp>

namespace keylane::bench {

/// Polls `rt.stats()` until no lane is alive and no key waits, or until
/// `timeout` passed (false).
template <class Runtime>
bool wait_lanes_retired(const Runtime& rt, std::chrono::milliseconds timeout) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    auto st = rt.stats();
    if (st.active_lanes == 0 && st.waiting_keys == 0)
      return true;
    if (std::chrono::steady_clock::now() >= deadline)
      return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

/// Stops `rt` and drops it. Returns its stats from just before the stop
/// and a note on the events the stop reported unfinished ("" if none).
template <class Runtime>
std::pair<keylane::stats, std::string>
stop_runtime(std::unique_ptr<Runtime>& rt) {
  auto st = rt->stats();
  auto rep = rt->stop();
  rt.reset();
  std::string note;
  if (!rep.unfinished.empty())
    note = "stop() reported " + std::to_string(rep.unfinished.size())
           + " unfinished events";
  return {std::move(st), std::move(note)};
}

} // namespace keylane::bench
