// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <atomic>
#include <mutex>
#include <vector>

#include <caf/fwd.hpp>

#include "keylane/detail/event_base.hpp"
#include "keylane/detail/waiter.hpp"
#include "keylane/stats.hpp"

namespace keylane::detail {

/// What `stop()` must account for: the runtime's actors still alive, and
/// every accepted event that ended before delivery (with the stage it was
/// in), so the stop report names each one.
///
/// Thread-safety: every call may run on any thread at once; `take` runs
/// once the actors are gone.
class stop_ledger {
public:
  /// `keep`: events that never started are kept for the durable park store.
  stop_ledger(waiter& w, bool keep) : waiter_(w), keep_(keep) {}

  /// Registers `self`, an actor of the runtime, until CAF has cleaned it
  /// up: after its `on_exit` and after CAF emptied its mailbox, whose
  /// messages may hold events (an `event_batch` records its events here as
  /// it is destroyed). `stop` waits for all to leave before `take`.
  void watch(caf::abstract_actor& self);

  /// True once every registered actor left.
  [[nodiscard]] bool actors_gone() const noexcept {
    return live_actors_.load(std::memory_order_acquire) == 0;
  }

  /// Records an event that `stop` ended before delivery.
  void abandon(event_ptr ev, const char* stage);

  /// Records an event that `stop` ended before delivery, by number and key
  /// (for events held only as spill records).
  void abandon(uint64_t seq, const key& k, const char* stage);

  /// The events recorded so far, and those kept for the durable store.
  void take(std::vector<unfinished_event>& unfinished,
            std::vector<event_ptr>& to_keep);

private:
  waiter& waiter_;
  bool keep_;
  std::atomic<int> live_actors_{0};
  std::mutex mtx_;
  std::vector<unfinished_event> abandoned_;
  std::vector<event_ptr> to_keep_;
};

} // namespace keylane::detail
