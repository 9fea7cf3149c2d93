// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>

#include <caf/actor.hpp>
#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>
#include <caf/event_based_actor.hpp>
#include <caf/timespan.hpp>

#include "keylane/detail/result_box.hpp"
#include "keylane/detail/unique_function.hpp"
#include "keylane/outcome.hpp"

namespace caf::scheduler {
class test_coordinator;
} // namespace caf::scheduler

namespace keylane::testing::detail {

/// The untyped half of `testing::kit`: a CAF actor system on CAF's
/// deterministic scheduler (`test_coordinator`, the "testing" policy: no
/// worker thread, jobs run in the calling thread), one actor that stands
/// for the shard (handlers' `self()`, and where their completions and
/// answers arrive, as in the runtime), and the test's clock with its
/// timers. Time moves only in `advance`; timers fire in due order, and
/// timers due at the same time in the order they were set.
/// Not thread-safe: one test thread drives it.
class kit_core {
public:
  using duration = std::chrono::nanoseconds;

  /// A completion reached the kit's actor (`complete_atom`, as a shard
  /// gets it): lane, token, status, permanent, error, result.
  using complete_fn =
    std::function<void(uint64_t, uint64_t, outcome, bool, std::string,
                       keylane::detail::result_box_ptr)>;

  explicit kit_core(complete_fn on_complete);
  ~kit_core();
  kit_core(const kit_core&) = delete;
  kit_core& operator=(const kit_core&) = delete;

  /// The actor system the handlers run in: spawn the actors they talk to
  /// here; the kit runs them in the test's thread.
  [[nodiscard]] caf::actor_system& system() noexcept { return *system_; }

  /// The actor handlers see as `self()`.
  [[nodiscard]] caf::event_based_actor* self() const noexcept {
    return self_;
  }

  /// The kit's actor, as a completion's destination.
  [[nodiscard]] caf::abstract_actor* host() const noexcept;

  /// Time on the test's clock since the kit started.
  [[nodiscard]] duration now() const noexcept { return now_; }

  /// Sets a timer: `fn` runs when the clock reaches now + `delay`.
  uint64_t set_timer(duration delay, keylane::detail::unique_function fn);

  /// Cancels a timer: true if it was pending.
  bool cancel_timer(uint64_t id);

  /// True if timer `id` has not fired and was not cancelled.
  [[nodiscard]] bool timer_pending(uint64_t id) const;

  /// Timers that have not fired.
  [[nodiscard]] size_t pending_timers() const noexcept {
    return timers_.size();
  }

  /// When the next timer fires, if any.
  [[nodiscard]] std::optional<duration> next_timer() const;

  /// Runs the actors' queued jobs (completions, answers, the handlers'
  /// own actors) until none is left; returns how many ran.
  size_t run_actors();

  /// Runs `fn` inside a turn of the kit's actor, now: handler code runs
  /// there, as it runs inside its shard's turn in the runtime, so that
  /// `self()->request(...)` and the like find the actor running.
  void within(keylane::detail::unique_function fn);

  /// Moves the clock to `now() + d`: each timer due on the way fires at
  /// its time, in due order, and `settle` runs after each (so what a
  /// timer starts happens before the next one fires). CAF's own clock
  /// (timeouts of the handlers' requests) moves along.
  void advance(duration d, const std::function<void()>& settle);

  /// Drops every pending timer (a crash).
  void clear_timers() { timers_.clear(); }

private:
  // Moves CAF's test clock to the kit's.
  void sync_caf_clock();

  std::unique_ptr<caf::actor_system_config> cfg_;
  std::unique_ptr<caf::actor_system> system_;
  caf::scheduler::test_coordinator* sched_ = nullptr;
  caf::actor actor_;
  caf::event_based_actor* self_ = nullptr;
  complete_fn on_complete_;
  std::deque<keylane::detail::unique_function> calls_; // for `within`
  duration now_{0};
  duration caf_now_{0};
  uint64_t next_id_ = 0;
  // By (due, id): same-time timers fire in the order they were set.
  std::map<std::pair<duration, uint64_t>, keylane::detail::unique_function>
    timers_;
  std::map<uint64_t, duration> due_of_;
};

} // namespace keylane::testing::detail
