// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <chrono>

#include <caf/event_based_actor.hpp>
#include <caf/timespan.hpp>

#include "keylane/completion.hpp"
#include "keylane/detail/asked_event.hpp"
#include "keylane/detail/unique_function.hpp"
#include "keylane/errc.hpp"
#include "keylane/event.hpp"
#include "keylane/key.hpp"

namespace keylane {

/// Names a `tell_after` timer, for `cancel_timer`.
using timer_id = uint64_t;

namespace detail {
class lane;
class handler_host;
class state_slot;
template <class A, class B>
class stage_adapter;
} // namespace detail

/// The untyped part of a handler; derive from `handler<P, R>` instead.
class handler_base {
public:
  virtual ~handler_base() = default;

  /// Called once when the key's lane starts, before its first event:
  /// load per-key state here.
  virtual void on_activate(const key& k);

  /// Called once when the key's lane retires, after its last event
  /// finished: flush per-key state here. The key's next lane activates
  /// only after this returns.
  virtual void on_retire(const key& k);

  /// Runs one event; called by the lane. Not for users.
  virtual void invoke(detail::event_base& ev, detail::completion_core core) = 0;

  /// The slot an asynchronous result is moved into. Not for users.
  virtual void* result_slot(detail::event_base& ev) noexcept = 0;

  /// The handler's keyed state (`stateful_handler`), or null. Not for users.
  virtual detail::state_slot* keyed_state() noexcept { return nullptr; }

protected:
  /// The shard actor this handler's lane runs in: use it to message other
  /// actors (`self()->request(db, timeout, ...).then(...)`). Valid from
  /// `on_activate` on. An idle lane (nothing pending: no request, timer or
  /// ask) may move to a less busy shard between events, so ask for it
  /// each time rather than keeping it. The shard hosts other keys' lanes
  /// too: never block its thread, and prefer `run_later` to timers of your
  /// own. Response handlers of requests made inside `on_activate`,
  /// `on_event` or a `run_later` callback are dropped when the lane
  /// retires, and those of an attempt's requests when that attempt times
  /// out (`retry.attempt_timeout_ms`); a request made inside a response
  /// handler is not tracked, so finish such chains before completing the
  /// event.
  [[nodiscard]] caf::event_based_actor* self() const noexcept { return self_; }

  /// Runs `fn` on this handler's lane after `delay`, without holding a
  /// thread meanwhile (a simulated I/O wait, a backoff). Dropped if the lane
  /// retires or stops first; a lane with a pending completion never
  /// retires. `fn` may be move-only, so it can own the event's completion:
  /// `run_later(d, [done = std::move(done)]() mutable { done.ok(r); })`.
  void run_later(caf::timespan delay, detail::unique_function fn);

  /// The key this handler instance serves.
  [[nodiscard]] const key& current_key() const noexcept { return *key_; }

  /// The time on the steady clock as the handler's host keeps it: the
  /// steady clock itself in a runtime, the test's clock under
  /// `keylane::testing`. A handler that reads time here (a tick's grid, an
  /// expiry) can be tested without waiting for it.
  [[nodiscard]] std::chrono::steady_clock::time_point now() const;

  /// Cancels a `tell_after` timer: true if it was pending, and then it
  /// never fires; false if it fired already, was cancelled, or its attempt
  /// failed. Any key's handler may cancel any timer of its runtime.
  bool cancel_timer(timer_id id);

  /// Keeps this key's lane (and handler instance) alive while it is dry,
  /// past `lane_linger_ms` and while other keys wait for a slot of the cap,
  /// until `release` (a room with players in it, a book with resting
  /// orders). The lane still counts in `max_active_keys`. Held lanes retire
  /// at `stop`, and when a reload lowers the cap below them they stay.
  void hold();

  /// Lets the lane retire again when dry (after its linger).
  void release();

  /// Lets this key's lane run up to `events` events in a turn, instead of
  /// `runtime.lane_batch`, while the lane lives (1 to 1,000,000; set it in
  /// `on_activate` to apply from the first turn). For a class of keys that
  /// needs it (a busy room, a hot book) without raising every key's budget:
  /// the other keys of its shard then wait up to that many of its events.
  void set_turn_budget(size_t events);

  // Untyped halves of `handler<P, R>`'s messaging (the lane's side).
  [[nodiscard]] errc send_message(detail::event_ptr ev);
  [[nodiscard]] errc send_timer(caf::timespan delay, detail::event_ptr ev,
                                timer_id& id);
  [[nodiscard]] errc send_ask(detail::event_ptr ev, detail::ask_route& route,
                              caf::timespan timeout,
                              std::unique_ptr<detail::ask_waiter> waiter);

private:
  friend class detail::lane;
  friend class detail::handler_host;
  template <class A, class B>
  friend class detail::stage_adapter;
  caf::event_based_actor* self_ = nullptr;
  detail::lane* lane_ = nullptr;
  const key* key_ = nullptr;
  // Set only outside the runtime (the test kit): then it takes the calls
  // that go to `lane_` otherwise.
  detail::handler_host* host_ = nullptr;
};

/// Base class of user handlers. One instance serves one key for as long
/// as the key's lane lives, so members can hold per-key state. Calls of
/// `on_activate`, `on_event` and `on_retire` never overlap, run on the
/// lane's shard actor, and `on_event` sees the key's events one at a time in
/// submission order: the next starts only after the previous completion
/// finished.
template <class Payload, class Result>
class handler : public handler_base {
public:
  using payload_type = Payload;
  using result_type = Result;
  using event_type = event<Payload, Result>;

  /// Processes one event and finishes `done` now or later. `payload`
  /// stays where it is until `done` is finished, so callbacks that finish
  /// it later may keep a reference to it. To finish it from callbacks that
  /// get copied (CAF's `then`), use `std::move(done).share()`.
  virtual void on_event(Payload& payload, completion<Result> done) = 0;

protected:
  /// Sends `payload` to key `k` of this runtime as an event, behind every
  /// event `k` already has. Sent inside an attempt (`on_event`, or a
  /// callback before the completion), it is part of the event's effect: it
  /// leaves when the event ends ok or skipped, with the event's other
  /// tells in the order made, and is dropped if the attempt fails (a retry
  /// sends its own). Outside an attempt (`on_activate`, a timer after the
  /// completion) it leaves at once. Never waits: past
  /// `messaging.max_in_flight` it returns `errc::messages_full` (fail the
  /// event to retry after a backoff), `errc::stopped` once stopping.
  [[nodiscard]] errc tell(const key& k, Payload payload) {
    return this->send_message(
      detail::event_ptr{new event<Payload, Result>(k, std::move(payload))});
  }

  /// As `tell`, delivered `delay` later: a timer, armed when the event ends
  /// ok (at once outside an attempt), that outlives this lane (a timer to
  /// a key without a lane starts one). It dies with the process, except a
  /// timer a stateful handler sets for its own key inside an attempt
  /// (`messaging.exactly_once`): that one is kept in the key's state until
  /// it fires into it, across restarts. `id` names it for `cancel_timer`
  /// in this process. `errc::timers_full` past `messaging.max_timers`.
  [[nodiscard]] errc tell_after(caf::timespan delay, const key& k,
                                Payload payload, timer_id& id) {
    return this->send_timer(
      delay,
      detail::event_ptr{new event<Payload, Result>(k, std::move(payload))},
      id);
  }

  /// Sends `payload` to key `k` as `tell` does, but at once, and calls
  /// `on_answer(caf::expected<Result>)` on this lane when that event ends:
  /// its result, `errc::ask_failed` if it failed, was skipped or parked,
  /// or `errc::ask_timeout` after `timeout` (a slow or parked target, or a
  /// cycle of asks). It never blocks the thread: finish this event's
  /// completion from `on_answer`. The target's event is an ordinary one
  /// (its result also reaches the output). A retried attempt asks again.
  /// Returns as `tell` does; on an error `on_answer` is never called.
  template <class F>
  [[nodiscard]] errc ask(const key& k, Payload payload,
                         caf::timespan timeout, F&& on_answer) {
    static_assert(std::is_copy_constructible_v<Result>,
                  "ask needs a copyable Result: the answer is a copy of "
                  "the target event's result, which also goes to the output");
    static_assert(std::is_invocable_v<std::decay_t<F>&, caf::expected<Result>>,
                  "on_answer must take a caf::expected<Result>");
    auto* ev = new detail::asked_event<Payload, Result>(k, std::move(payload));
    detail::ask_route& route = *ev;
    return this->send_ask(
      detail::event_ptr{ev}, route, timeout,
      std::make_unique<detail::typed_ask_waiter<Result, std::decay_t<F>>>(
        std::forward<F>(on_answer)));
  }

public:
  void invoke(detail::event_base& ev, detail::completion_core core) final {
    auto& e = static_cast<event_type&>(ev);
    on_event(e.payload, completion<Result>{std::move(core)});
  }

  void* result_slot(detail::event_base& ev) noexcept final {
    return &static_cast<event_type&>(ev).result;
  }
};

} // namespace keylane
