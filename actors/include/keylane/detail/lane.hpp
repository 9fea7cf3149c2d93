// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include <caf/timespan.hpp>

#include "keylane/config.hpp"
#include "keylane/detail/activation.hpp"
#include "keylane/detail/asked_event.hpp"
#include "keylane/detail/backoff.hpp"
#include "keylane/detail/event_base.hpp"
#include "keylane/detail/event_fifo.hpp"
#include "keylane/detail/handler_maker.hpp"
#include "keylane/detail/lane_messaging.hpp"
#include "keylane/detail/messages.hpp"
#include "keylane/detail/running_attempt.hpp"
#include "keylane/detail/actor_parts.hpp"
#include "keylane/detail/state_cursor.hpp"
#include "keylane/detail/unique_function.hpp"
#include "keylane/handler.hpp"
#include "keylane/key.hpp"

namespace keylane::detail {

class shard;

/// What serialises one key's events while the key is active: a queue and
/// the key's handler instance, living inside a shard actor (lanes are
/// objects, not actors: starting and retiring one is a table insert and
/// erase). It runs one event at a time and starts the next from the
/// previous one's completion, never by blocking. Its key's events come
/// through its shard's inbox, in order: from `submit`, or, for a key that
/// waited for a slot of the cap, from whoever admitted it (the key table).
/// Once dry it tells its shard, which retires it after the linger:
/// `on_retire` runs, then the key table clears the key's route if no event
/// of the key is unfinished (`key_table::retire_round`); if one is on its
/// way, the lane stays, and
/// builds a fresh handler instance for it. A failed attempt is retried at
/// the head of the queue after a backoff timer (no thread is held
/// meanwhile), so the key's later events wait and no other key does. When
/// an event fails for good, it and every event queued behind it go to the
/// park store, in order; from then on the lane parks whatever it is sent,
/// (the key table marks the key parked: that is where "parked" lives), and
/// when it retires the key stays parked: its events go to the supervisor,
/// which parks them itself. Every lane has a process-wide
/// unique id: messages for a lane that is gone (a late completion, a
/// timer) find no lane and are dropped. A handler that cannot be built, or
/// whose `on_activate` throws, fails the attempt at the head like any other
/// failure: the next attempt builds a fresh instance. What the lane keeps
/// beyond its per-event fields lives in parts it owns by value, each with
/// its own verbs: its keyed state (`state_cursor`), its messages, asks,
/// timers and requests (`lane_messaging`), the building of its handler
/// (`activation`) and its running attempt (`running_attempt`). Only its
/// shard's thread touches a lane.
class alignas(64) lane {
public:
  /// A lane for key `k` with id `id` (its first event names both); it
  /// builds its handler with `maker` when it first has an event to run.
  lane(shard* host, uint64_t id, keylane::key k, handler_maker* maker);
  ~lane();
  lane(const lane&) = delete;
  lane& operator=(const lane&) = delete;

  [[nodiscard]] uint64_t id() const noexcept { return id_; }
  [[nodiscard]] const keylane::key& k() const noexcept { return key_; }

  /// An event of its key (through the shard's inbox); true if the lane is
  /// not yet marked for `run_taken` this round.
  [[nodiscard]] bool take(event_ptr ev);
  /// Runs the events `take` gave it.
  void run_taken();
  /// Nothing to run and nothing running: it may retire.
  /// Finished events whose backlog counts the lane has not given back; the
  /// caller gives them back (`key_table::retire_round::retire`).
  [[nodiscard]] size_t take_unreleased() noexcept {
    return std::exchange(unreleased_, 0);
  }
  [[nodiscard]] bool dry() const noexcept {
    return !awaiting_ && queue_.empty() && !turn_pending_;
  }
  /// When it last ran dry, by its shard's round clock (none: it has taken
  /// events since).
  [[nodiscard]] clock::time_point dry_since() const noexcept {
    return dry_since_;
  }
  /// An entry of its shard's idle list names it (see `shard::idle`).
  [[nodiscard]] bool listed() const noexcept { return listed_; }
  void list(bool on) noexcept { listed_ = on; }
  /// Its key is parked: it parks whatever it is sent.
  [[nodiscard]] bool parking() const noexcept { return parking_; }
  /// Runs queued events until one is pending or `lane_batch` are spent;
  /// a lane that spent its budget waits for its turn (`take_turn`), even
  /// if more events arrive meanwhile.
  void run();
  /// The shard's round-robin turn after a spent budget.
  void take_turn();
  /// Runs `on_retire` and drops the handler instance; the shard erases the
  /// lane next, unless an event is on its way (then the lane builds a
  /// fresh instance for it).
  void retire();
  /// Hands everything the lane holds to the stop ledger as not done.
  void abandon();
  /// Dry, and nothing of it waits on its shard: no hold or park, no
  /// message, timer, ask or request outstanding, no state to write. Its
  /// shard may hand it to another (`key_table::move`).
  [[nodiscard]] bool movable() const noexcept;
  /// It lives in `host` now, under id `id` (handed over while `movable`),
  /// dry since it came.
  void rehost(shard* host, uint64_t id);

  void on_complete(uint64_t token, outcome status, bool permanent,
                   std::string error, result_box_ptr box);
  void on_timeout(uint64_t token);
  void on_retry(uint64_t token);
  void on_timer(uint64_t timer);
  /// Answers the sink if it holds event `seq` (stall log).
  void locate(uint64_t seq);

  /// True inside the handler call of invocation `token` of lane `id` on
  /// this thread: only then may a completion write its result straight
  /// into the event, and a stale completion finished inside a later call
  /// never touches that event. Safe to call for a lane that is gone.
  [[nodiscard]] static bool in_sync_call_of(uint64_t id,
                                            uint64_t token) noexcept;
  /// True inside any handler call of lane `id` on this thread.
  [[nodiscard]] static bool in_sync_call(uint64_t id) noexcept;

  /// A completion finished inside `on_event` (result already in place).
  void finish_sync(uint64_t token, outcome status, bool permanent) noexcept;
  void finish_sync(uint64_t token, outcome status, std::string&& error,
                   bool permanent) noexcept;

  /// Arms a handler timer (`run_later`).
  void schedule(caf::timespan delay, unique_function fn);

  /// A checkpoint: writes the key's state now if no event is running,
  /// else right after the running one ends.
  void checkpoint();

  // Messages between keys (lane_messages.cpp): see handler<P, R>::tell.
  [[nodiscard]] errc tell(event_ptr ev);
  [[nodiscard]] errc tell_after(caf::timespan delay, event_ptr ev,
                                uint64_t& id);
  [[nodiscard]] errc ask(event_ptr ev, ask_route& route,
                         caf::timespan timeout,
                         std::unique_ptr<ask_waiter> waiter);
  /// The answer to ask `ask` (its asked event ended).
  void on_answer(uint64_t ask, outcome status, std::string error,
                 result_box_ptr box);
  /// Cancels a `tell_after` timer (see handler_base::cancel_timer).
  bool cancel_timer(uint64_t id);
  /// The handler holds the lane: it does not retire while dry.
  void hold(bool on) noexcept {
    if (held_ && !on)
      dry_since_ = {}; // its next `run` offers it to its shard to retire
    held_ = on;
  }
  [[nodiscard]] bool held() const noexcept { return held_; }
  /// Events per turn for this lane (`lane_batch` until set), clamped to
  /// 1 to 1,000,000.
  void set_turn_budget(size_t events) noexcept {
    batch_limit_ = static_cast<uint32_t>(
      std::min<size_t>(std::max<size_t>(events, 1), 1000000));
  }

private:
  void invoke_current();
  void wake();
  bool start_handler();
  bool reactivate();
  void drop_handler();
  void settle(outcome status, std::string&& error, bool permanent);
  void finish_current(outcome status, std::string&& error);
  void start_parking(std::string reason);
  void park(std::vector<event_ptr>& evs);
  void flush();
  template <class F>
  void call_handler(bool invocation_call, F&& f);
  std::string doing();
  // Keyed state (lane_state.cpp; the cursor, `state_`, holds it).
  [[nodiscard]] bool load_state();
  [[nodiscard]] bool begin_state_attempt();
  void undo_state();
  void note_finished(uint64_t seq);
  void take_snapshot();
  void mark_state_dirty();
  // Messages of the running attempt: sent when it ends well, else dropped.
  [[nodiscard]] bool in_attempt() const noexcept {
    return current_ != nullptr && !backing_off_;
  }
  // Runs a callback of the handler's (not an attempt), then the queue.
  void call_back(unique_function& fn);
  // The live settings: the shard's, refreshed after a reload (a reference
  // to hold only until the lane next calls it).
  const settings& policy();
  // Its shard's parts, through the shard (hot in cache) rather than a
  // reference of its own: the lane's two hot lines have no room for it.
  [[nodiscard]] const shard_parts& parts() const noexcept;

  // Hot first: with thousands of keys a lane is cold when its next event
  // comes, and each line an event touches is a miss. Everything an event
  // reads or writes when nothing unusual happens (no state, no message
  // sent, no replay, no hold) is in the first two lines, the state
  // cursor's hot bytes included (the class is aligned to one; a
  // static_assert in lane.cpp holds it there). What failures, parking,
  // state and messages use comes after, the parts the lane owns first.
  shard* host_;
  uint64_t id_;
  std::unique_ptr<handler_base> handler_; // null: see activation_
  event_ptr current_;
  event_fifo queue_;
  uint64_t token_ = 0;
  // Finished events handed to the shard's output whose backlog counts are
  // not given back yet (see `release_every_`).
  uint32_t unreleased_ = 0;
  uint32_t batch_limit_; // lane_batch: at most 1,000,000

  running_attempt attempt_;
  clock::time_point dry_since_{}; // see dry_since
  // `flush` gives finished events' counts back once this many gathered:
  // each give-back takes the key's stripe lock and slot, lines the
  // producer writes at every submit, so giving back per event moved them
  // between cores per event with thousands of keys. The rest goes back
  // when the lane retires (`take_unreleased`).
  uint8_t release_every_;
  bool awaiting_ = false; // an attempt runs, or a backoff waits
  bool turn_pending_ = false; // spent its budget, waits for its turn
  bool marked_ = false;       // in its shard's list for `run_taken`
  bool listed_ = false;       // see listed
  bool awake_ = false;        // a handler was built (or failed to be)
  bool parking_ = false;
  bool backing_off_ = false;
  bool held_ = false;         // see hold
  // The running attempt put a message in the outbox (`messages_`, on a
  // colder line, is looked at only then).
  bool sent_ = false;
  bool unparking_ = false;    // `unpark_through_` is set

  // Keyed state: the handler's (or none), whether it changed since its
  // last write, and the events whose changes that write will make durable.
  state_cursor state_;
  // What the handler sent, asked, armed and requested.
  lane_messaging messages_;
  uint64_t unpark_through_ = 0; // replayed events up to this id ended

  keylane::key key_;
  // The reason `finish_sync` left in `attempt_`, set only for a failure.
  std::string sync_error_;
  // Builds the handler instance, and says why it could not.
  activation activation_;
  jitter_rng rng_;
};

} // namespace keylane::detail
