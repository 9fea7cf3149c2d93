// SPDX-License-Identifier: Apache-2.0
#include "keylane/detail/lane.hpp"

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <exception>
#include <utility>

#include <caf/all.hpp>

#include "keylane/detail/key_table.hpp"
#include "keylane/detail/live_settings.hpp"
#include "keylane/detail/park_service.hpp"
#include "keylane/detail/stop_ledger.hpp"
#include "keylane/detail/shard.hpp"

namespace keylane::detail {

namespace {

// The handler call running on this thread, if any: a completion compares
// against it before it touches its lane, which may be gone.
struct invocation {
  lane* owner = nullptr;
  uint64_t id = 0;
  uint64_t token = 0;
};

thread_local invocation current_call;

// Counts given back one by one under a small limit (a producer at the
// limit sees each event end); in groups where a group is under 2 % of it.
uint8_t release_group(size_t key_backlog) noexcept {
  return key_backlog >= 4096 ? 64 : 1;
}

} // namespace

lane::lane(shard* host, uint64_t id, keylane::key k, handler_maker* maker)
  : host_(host),
    id_(id),
    batch_limit_(static_cast<uint32_t>(
      std::max<size_t>(1, host->settings_now().lane_batch))),
    release_every_(release_group(host->settings_now().key_backlog)),
    key_(std::move(k)),
    activation_(maker),
    rng_(key_.hash() ^ id) {}

lane::~lane() {
  // What every event touches stays in the first two cache lines, the
  // state cursor's hot bytes included.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Winvalid-offsetof"
  static_assert(offsetof(lane, state_) + state_cursor::hot_bytes <= 128,
                "a lane's hot fields grew");
#pragma GCC diagnostic pop
}

bool lane::in_sync_call_of(uint64_t id, uint64_t token) noexcept {
  auto& c = current_call;
  return c.owner != nullptr && c.id == id && c.token == token
         && !c.owner->attempt_.done();
}

bool lane::in_sync_call(uint64_t id) noexcept {
  return current_call.owner != nullptr && current_call.id == id;
}

template <class F>
void lane::call_handler(bool invocation_call, F&& f) {
  // Marks an `on_event` call for completions (see in_sync_call_of; anywhere
  // else a completion goes by message) and notes the CAF requests the
  // handler makes, whose answers must not outlive it.
  struct scope {
    lane* self;
    invocation saved;
    uint64_t mark;
    ~scope() {
      current_call = saved;
      auto now = self->host_->request_mark();
      if (now != mark)
        self->messages_.note_requests(mark + 1, now, *self->host_);
    }
  } guard{this, current_call, host_->request_mark()};
  current_call = invocation_call ? invocation{this, id_, token_}
                                 : invocation{};
  f();
}

const settings& lane::policy() {
  // The shard's copy, on the shard's (hot) lines rather than the lane's.
  return host_->settings_now();
}

void lane::wake() {
  // On the first event, and again on the next one after a retire that an
  // event in flight overtook (the instance was already gone).
  awake_ = true;
  if (!activation_.broken().empty())
    return;
  handler_ = activation_.build();
  if (handler_)
    start_handler();
  activation_.note_first();
}

bool lane::start_handler() {
  handler_->self_ = host_;
  handler_->lane_ = this;
  handler_->key_ = &key_;
  if (!load_state()) {
    drop_handler();
    return false;
  }
  try {
    call_handler(false, [this] { handler_->on_activate(key_); });
    return true;
  } catch (const std::exception& e) {
    activation_.fail(std::string{"on_activate threw: "} + e.what());
  } catch (...) {
    activation_.fail("on_activate threw a non-standard exception");
  }
  // A half-activated instance is not trusted with events: the next attempt
  // starts from a fresh one.
  drop_handler();
  return false;
}

bool lane::reactivate() {
  if (!activation_.can_build()) {
    activation_.give_up();
    return false;
  }
  handler_ = activation_.build();
  return handler_ && start_handler();
}

void lane::drop_handler() {
  handler_.reset();
  state_.detach();
  messages_.forget_instance(*host_);
}

void lane::retire() {
  if (handler_) {
    try {
      call_handler(false, [this] { handler_->on_retire(key_); });
    } catch (...) {
      // State could not be flushed; the events themselves are done.
    }
    if (state_.dirty())
      take_snapshot();
  }
  // The handler dies before the slot is handed on, so live handler
  // instances never exceed the cap either; answers to requests it left
  // open find no handler to run.
  drop_handler();
  awake_ = false;
  // What the instance asked for its lane goes with it: a fresh instance
  // (an event on its way) starts from the settings.
  held_ = false;
  batch_limit_ = static_cast<uint32_t>(
    std::max<size_t>(1, host_->settings_now().lane_batch));
}

bool lane::take(event_ptr ev) {
  dry_since_ = {};
  ev->lane = 0;
  if (parking_) {
    ev->error = parked_behind_reason;
    std::vector<event_ptr> evs;
    evs.push_back(std::move(ev));
    park(evs);
  } else {
    queue_.push_back(std::move(ev));
  }
  return !std::exchange(marked_, true);
}

void lane::run_taken() {
  marked_ = false;
  run();
}

void lane::run() {
  if (turn_pending_)
    return; // new events wait for the turn: a busy key gets no extra ones
  if (!awake_ && !queue_.empty())
    wake();
  size_t budget = batch_limit_;
  while (!awaiting_ && !queue_.empty()) {
    if (budget-- == 0) {
      // Other lanes of the shard (and our own completions) get a turn: a
      // hot key must not starve the rest.
      turn_pending_ = true;
      host_->want_turn(id_);
      break;
    }
    current_ = queue_.pop_front();
    invoke_current();
  }
  flush();
  if (dry() && dry_since_ == clock::time_point{})
    dry_since_ = host_->idle(*this);
}

void lane::take_turn() {
  turn_pending_ = false;
  run();
}

void lane::invoke_current() {
  ++token_;
  ++current_->attempts;
  // Precise only where a deadline or the window's sizing reads it: a
  // clock read per event was ~3 % of the CPU of a short handler's path;
  // else the round's coarse time (a stall log reads it).
  auto timeout_ms = policy().attempt_timeout_ms;
  attempt_.start(timeout_ms > 0 || parts().live.window_auto()
                   ? clock::now()
                   : host_->round_time());
  if (current_->attempts == 1)
    current_->started = attempt_.started();
  // Without an instance, activation failed (a lane with a handler has
  // neither reason set: only these lines of the lane stay cold).
  if (!handler_) {
    // A failed activation fails this attempt; the first attempt has just
    // tried it in `activate`, each later one tries again.
    if (activation_.broken().empty() && !activation_.error().empty()
        && (activation_.take_just_failed() || !reactivate())
        && activation_.broken().empty()) {
      settle(outcome::failed, std::string{activation_.error()}, false);
      return;
    }
    if (!activation_.broken().empty()) {
      // No handler instance in this lane: retrying here cannot help.
      settle(outcome::failed, std::string{activation_.broken()}, true);
      return;
    }
  }
  if (state_.active() && !begin_state_attempt())
    return; // settled: applied before, or its state could not be kept
  std::string thrown;
  attempt_.call(host_->request_mark());
  auto deadline = timeout_ms > 0
                    ? attempt_.started() + std::chrono::milliseconds(timeout_ms)
                    : clock::time_point{};
  try {
    call_handler(true, [this, deadline] {
      handler_->invoke(*current_,
                       completion_core{this, id_, host_, token_,
                                       handler_->result_slot(*current_),
                                       deadline});
    });
  } catch (const std::exception& e) {
    thrown = std::string{"handler threw: "} + e.what();
  } catch (...) {
    thrown = "handler threw a non-standard exception";
  }
  if (!thrown.empty()) {
    // A completion finished before the throw keeps its outcome; one dropped
    // by the unwinding reports the exception instead.
    sync_error_.clear();
    if (attempt_.done() && attempt_.status() != outcome::failed)
      settle(attempt_.status(), std::string{}, false);
    else
      settle(outcome::failed, std::move(thrown), false);
  } else if (attempt_.done()) {
    // Only a failure left a reason (see finish_sync).
    settle(attempt_.status(),
           attempt_.status() == outcome::failed
             ? std::exchange(sync_error_, std::string{})
             : std::string{},
           attempt_.permanent());
  } else {
    awaiting_ = true;
    if (timeout_ms > 0)
      host_->arm_timeout(id_, token_, deadline, attempt_.started());
  }
}

void lane::on_timer(uint64_t timer) {
  unique_function fn;
  if (!messages_.take_timer(timer, fn))
    return;
  call_back(fn);
}

void lane::call_back(unique_function& fn) {
  try {
    call_handler(false, fn);
  } catch (...) {
    // A throwing callback (a timer's, an ask's answer) must not stop the
    // shard; the event it belonged to fails when its completion is dropped.
  }
  run();
}

void lane::schedule(caf::timespan delay, unique_function fn) {
  auto id = messages_.add_timer(std::move(fn));
  host_->delayed_send(host_, delay, timer_atom::value, id_, id);
}

bool lane::movable() const noexcept {
  return dry() && dry_since_ != clock::time_point{} && !held_ && !parking_
         && !unparking_ && messages_.quiet() && !state_.dirty()
         && !state_.write_due();
}

void lane::rehost(shard* host, uint64_t id) {
  host_ = host;
  id_ = id;
  listed_ = false;
  marked_ = false;
  // Handlers reach their shard through `self()`: the new one from now on.
  if (handler_)
    handler_->self_ = host;
  dry_since_ = host->idle(*this);
}

void lane::abandon() {
  if (state_.active()) {
    // Stop writes the state as of the last event that ended: one that is
    // running is undone first (without rollback its changes cannot be
    // told apart, so the last write stands).
    if (current_ && awaiting_ && !backing_off_ && !policy().state_rollback)
      state_.keep_last_write();
    else if (current_)
      undo_state();
    if (state_.dirty())
      take_snapshot();
  }
  if (current_)
    parts().ledger.abandon(std::move(current_), "running");
  while (!queue_.empty())
    parts().ledger.abandon(queue_.pop_front(), "queued");
  messages_.abandon(parts().msg);
  // The handler may hold completions that pin the shard: break the cycle.
  handler_.reset();
}

} // namespace keylane::detail
