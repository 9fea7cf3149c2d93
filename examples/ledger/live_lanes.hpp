// SPDX-License-Identifier: Apache-2.0
#pragma once

// The keylane runtime a scenario runs its lanes in, with the database actor
// its handlers talk to, kept in one place so that it can outlive the
// scenario (--serve) and be reached from the signal thread (SIGHUP).

#include <functional>
#include <memory>
#include <mutex>

#include <caf/expected.hpp>

#include <keylane/handler_registry.hpp>
#include <keylane/runtime.hpp>

#include "ledger_handler.hpp"

namespace ledger {

/// The runtime type of every ledger scenario.
using ledger_runtime = keylane::runtime<ledger_event, ledger_result>;

/// Holds at most one running ledger runtime and its database actor.
///
/// Thread-safety: `visit` and `stop` may be called from any thread; `stop`
/// waits for a `visit` in progress and `visit` after `stop` finds nothing,
/// so the signal thread never reaches a runtime that is stopping. `start`
/// and the runtime it returns belong to the scenario's thread.
class live_lanes {
public:
  live_lanes() = default;
  live_lanes(const live_lanes&) = delete;
  live_lanes& operator=(const live_lanes&) = delete;

  /// Stops what is still running.
  ~live_lanes();

  /// Starts a runtime from `cfg` and `reg`, spawns the database actor into
  /// `ctx->db` and keeps both until `stop`. Stops a runtime kept before.
  [[nodiscard]] caf::expected<ledger_runtime*>
  start(keylane::settings cfg, const keylane::handler_registry& reg,
        ledger_runtime::callback on_output, std::shared_ptr<lane_context> ctx);

  /// Calls `f` with the running runtime, under the lock; false if none runs.
  bool visit(const std::function<void(ledger_runtime&)>& f);

  /// Ends the database actor, then stops the runtime and reports what it did
  /// not deliver; an empty report if nothing ran.
  keylane::stop_report stop();

private:
  std::mutex mtx_;
  std::unique_ptr<ledger_runtime> rt_;
  std::shared_ptr<lane_context> ctx_;
};

} // namespace ledger
