// SPDX-License-Identifier: Apache-2.0
#pragma once

// What the keylane ways' `settle` waits for: every lane retired and no key
// waiting for a slot (the runtime is back to idle).

#include <chrono>
#include <thread>

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

} // namespace keylane::bench
