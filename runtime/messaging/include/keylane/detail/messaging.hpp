// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <unordered_map>
#include <utility>
#include <vector>

#include <caf/actor.hpp>
#include <caf/timespan.hpp>

#include "keylane/detail/event_base.hpp"
#include "keylane/errc.hpp"
#include "keylane/key.hpp"

namespace keylane::detail {

class ingress;

/// Counters of messages between keys, for `stats`.
struct messaging_counters {
  uint64_t sent = 0, refused = 0, in_flight = 0, asks = 0, ask_timeouts = 0,
           timers_pending = 0, timers_fired = 0, timers_cancelled = 0;
};

/// Messages between keys: what handlers send with `tell`, `ask` and
/// `tell_after`. A message is an event of the runtime, sent past the
/// window and the key backlog (a keylane thread never waits for them) and
/// bounded instead by `messaging.max_in_flight`: a unit is reserved when
/// the handler sends and given back when the message's event ends
/// (finished or parked: `ended`). Timers wait here, bounded by
/// `messaging.max_timers`, until their shard fires them; a timer that is
/// cancelled before it fires never does.
///
/// Thread-safety: every member may be called from any thread.
class messaging {
public:
  messaging(ingress& in, size_t max_in_flight, size_t max_timers)
    : in_(in), max_in_flight_(max_in_flight), max_timers_(max_timers) {}

  /// Takes a unit of `max_in_flight`; false (counted as refused) if all
  /// are taken.
  [[nodiscard]] bool reserve() noexcept;

  /// Gives back `n` units.
  void release(size_t n = 1) noexcept {
    in_flight_.fetch_sub(n, std::memory_order_acq_rel);
  }

  /// Sends `ev` (a unit reserved for it) to its key now: after every event
  /// the key already has, past the window and the key backlog. On
  /// `errc::stopped` the event is dropped and its unit given back.
  errc send(event_ptr ev);

  /// Every end of an event passes here (a lane finished it, or it was
  /// parked): a message gives its unit back, an ask answers its asker.
  void ended(event_base& ev) noexcept {
    if (ev.flags != 0)
      end_message(ev);
  }

  /// A fresh id for an ask (never 0).
  [[nodiscard]] uint64_t next_ask() noexcept {
    asks_.fetch_add(1, std::memory_order_relaxed);
    return next_ask_.fetch_add(1, std::memory_order_relaxed);
  }

  /// Counts an ask that ran out of time.
  void ask_timed_out() noexcept {
    ask_timeouts_.fetch_add(1, std::memory_order_relaxed);
  }

  // -- timers ------------------------------------------------------------------

  /// Keeps `ev` as a timer not yet armed; returns its id, or 0 if
  /// `max_timers` are pending.
  [[nodiscard]] uint64_t add_timer(event_ptr ev);

  /// Drops timer `id` without counting it cancelled (the attempt that set
  /// it failed).
  void drop_timer(uint64_t id);

  /// Cancels timer `id`: true if it was pending (it will never fire); its
  /// event goes to `ev` if given.
  bool cancel_timer(uint64_t id, event_ptr* ev = nullptr);

  /// Takes timer `id`'s event out (null if it is not pending), to be put
  /// back with `put_timer`.
  [[nodiscard]] event_ptr take_timer(uint64_t id);

  /// Makes `ev` the event of timer `id` (taken, or from an earlier run);
  /// 0 for `id` gives it a fresh id. Not bounded: the timer exists already.
  uint64_t put_timer(uint64_t id, event_ptr ev);

  /// Timer `id` is due: sends its event, unless it was cancelled.
  void fire_timer(uint64_t id);

  /// Sets the one actor that fires every timer (before events flow): a
  /// key's timers then fire in due order whichever shard armed them.
  void use_timer_actor(caf::actor a) { timer_actor_ = std::move(a); }

  /// Fires timer `id` after `delay`, through the timer actor.
  void arm_timer(uint64_t id, caf::timespan delay);

  // -- kept messages (`messaging.exactly_once`) -------------------------------

  /// Sends messages kept in their senders' written state; `send`'s rules.
  void send_kept(std::vector<event_ptr>& evs);

  /// Sends `ev`, which holds no unit, even past `max_in_flight`: it is due
  /// (a timer that fired, a kept message sent again at start).
  void send_due(event_ptr ev);

  /// Kept messages (sender, number) whose targets' written state holds
  /// them: their senders may forget them.
  void delivered(const std::vector<std::pair<key, uint64_t>>& done);

  /// The numbers of `sender`'s kept messages delivered since the last
  /// call for it.
  [[nodiscard]] std::vector<uint64_t> take_delivered(const key& sender);

  /// Units reserved and not yet given back (`drain` waits for none).
  [[nodiscard]] size_t in_flight() const noexcept {
    return in_flight_.load(std::memory_order_acquire);
  }

  [[nodiscard]] messaging_counters counters() const;

private:
  void end_message(event_base& ev) noexcept;

  ingress& in_;
  size_t max_in_flight_;
  size_t max_timers_;
  alignas(64) std::atomic<size_t> in_flight_{0};
  std::atomic<uint64_t> sent_{0}, refused_{0}, asks_{0}, ask_timeouts_{0},
    timers_fired_{0}, timers_cancelled_{0};
  std::atomic<uint64_t> next_ask_{1};

  std::mutex delivered_mtx_;
  std::unordered_map<key, std::vector<uint64_t>, key_hasher> delivered_;
  size_t delivered_count_ = 0;

  caf::actor timer_actor_;
  mutable std::mutex timers_mtx_;
  std::unordered_map<uint64_t, event_ptr> timers_;
  uint64_t next_timer_ = 1;
};

} // namespace keylane::detail
