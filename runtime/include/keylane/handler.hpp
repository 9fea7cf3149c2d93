// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <caf/event_based_actor.hpp>
#include <caf/timespan.hpp>

#include "keylane/completion.hpp"
#include "keylane/detail/unique_function.hpp"
#include "keylane/event.hpp"
#include "keylane/key.hpp"

namespace keylane {

namespace detail {
class lane;
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
  /// `on_activate` on. The shard hosts other keys' lanes too: never block
  /// its thread, and prefer `run_later` to timers of your own. Response
  /// handlers of requests made inside `on_activate`, `on_event` or a
  /// `run_later` callback are dropped when the lane retires, and those of
  /// an attempt's requests when that attempt times out
  /// (`retry.attempt_timeout_ms`); a request made inside a response handler
  /// is not tracked, so finish such chains before completing the event.
  [[nodiscard]] caf::event_based_actor* self() const noexcept { return self_; }

  /// Runs `fn` on this handler's lane after `delay`, without holding a
  /// thread meanwhile (a simulated I/O wait, a backoff). Dropped if the lane
  /// retires or stops first; a lane with a pending completion never
  /// retires. `fn` may be move-only, so it can own the event's completion:
  /// `run_later(d, [done = std::move(done)]() mutable { done.ok(r); })`.
  void run_later(caf::timespan delay, detail::unique_function fn);

  /// The key this handler instance serves.
  [[nodiscard]] const key& current_key() const noexcept { return *key_; }

private:
  friend class detail::lane;
  template <class A, class B>
  friend class detail::stage_adapter;
  caf::event_based_actor* self_ = nullptr;
  detail::lane* lane_ = nullptr;
  const key* key_ = nullptr;
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

  void invoke(detail::event_base& ev, detail::completion_core core) final {
    auto& e = static_cast<event_type&>(ev);
    on_event(e.payload, completion<Result>{std::move(core)});
  }

  void* result_slot(detail::event_base& ev) noexcept final {
    return &static_cast<event_type&>(ev).result;
  }
};

} // namespace keylane
