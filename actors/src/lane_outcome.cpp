// SPDX-License-Identifier: Apache-2.0
// How an attempt ends: completion, timeout, retry at the head after a
// backoff, parking when retries run out, and handing finished events on.
#include "keylane/detail/lane.hpp"

#include <algorithm>
#include <chrono>
#include <utility>

#include "keylane/detail/backoff.hpp"
#include "keylane/detail/key_table.hpp"
#include "keylane/detail/live_settings.hpp"
#include "keylane/detail/park_service.hpp"
#include "keylane/detail/shard.hpp"

namespace keylane::detail {

void lane::on_complete(uint64_t token, outcome status, bool permanent,
                       std::string error, result_box_ptr box) {
  if (!awaiting_ || token != token_ || !current_)
    return; // late (timed out), duplicate, or of an earlier attempt
  if (box)
    box->apply(handler_->result_slot(*current_));
  settle(status, std::move(error), permanent);
  run();
}

void lane::on_timeout(uint64_t token) {
  if (!awaiting_ || token != token_ || !current_)
    return;
  ++token_; // its completion, should it come, is now stale
  // So are the answers to what it asked: their handlers would change the
  // handler's (and the key's) state for an attempt that no longer counts.
  messages_.drop_requests_after(attempt_.request_mark(), *host_);
  settle(outcome::failed,
         "attempt timed out after "
           + std::to_string(policy().attempt_timeout_ms) + " ms",
         false);
  run();
}

void lane::on_retry(uint64_t token) {
  if (!awaiting_ || token != token_ || !current_)
    return;
  awaiting_ = false;
  backing_off_ = false;
  invoke_current();
  run();
}

void lane::settle(outcome status, std::string&& error, bool permanent) {
  // Every path below empties the outbox.
  bool sent = std::exchange(sent_, false) && messages_.has_outbox();
  if (status != outcome::failed) {
    if (state_.active())
      state_.note_applied(status, *current_);
    // Kept in the state before a write can take it: the write that makes
    // the event's change durable keeps its messages too.
    if (sent && state_.keeps_messages())
      messages_.keep_outbox(state_, key_, parts().ops, parts().msg,
                            parts().log);
    finish_current(status, std::move(error));
    if (sent && messages_.has_outbox())
      messages_.send_outbox(parts().msg);
    return;
  }
  if (sent)
    messages_.drop_outbox(parts().msg);
  if (state_.active())
    undo_state();
  const auto& pol = policy();
  if (permanent || current_->attempts >= pol.max_attempts) {
    if (pol.park == park_mode::none)
      finish_current(status, std::move(error));
    else
      start_parking(std::move(error));
    return;
  }
  // Retry at the head: the key's later events keep waiting behind it.
  current_->error = std::move(error);
  awaiting_ = true;
  backing_off_ = true;
  ++token_; // a late completion of the failed attempt is now stale
  auto delay = backoff_delay(pol, current_->attempts, rng_());
  auto now = clock::now();
  auto at = now + std::chrono::duration_cast<clock::duration>(delay);
  host_->arm_retry(id_, token_, at, now);
}

void lane::finish_sync(uint64_t token, outcome status,
                       bool permanent) noexcept {
  if (token == token_)
    (void) attempt_.finish(status, permanent);
}

void lane::finish_sync(uint64_t token, outcome status, std::string&& error,
                       bool permanent) noexcept {
  if (token != token_ || !attempt_.finish(status, permanent))
    return;
  // Only a failure's reason is kept (`finish_current`): a success leaves
  // the line of the string untouched.
  if (status == outcome::failed)
    sync_error_ = std::move(error);
}

void lane::finish_current(outcome status, std::string&& error) {
  awaiting_ = false;
  if (current_->park_id != 0 && current_->park_id > unpark_through_) {
    unpark_through_ = current_->park_id;
    unparking_ = true;
  }
  // A reason only for a failure (an earlier attempt's goes).
  if (status == outcome::failed)
    current_->error = std::move(error);
  else if (!current_->error.empty())
    current_->error.clear();
  current_->status = status;
  note_finished(current_->seq);
  host_->finished(std::move(current_));
  ++unreleased_;
  if (state_.write_due())
    take_snapshot();
}

void lane::start_parking(std::string reason) {
  awaiting_ = false;
  ++token_; // a late completion of the last attempt is now stale
  current_->error = std::move(reason);
  std::vector<event_ptr> evs;
  evs.push_back(std::move(current_));
  while (!queue_.empty()) {
    evs.push_back(queue_.pop_front());
    evs.back()->error = parked_behind_reason;
  }
  park(evs);
  parking_ = true;
  host_->parked(key_);
}

void lane::park(std::vector<event_ptr>& evs) {
  if (evs.empty())
    return;
  // The shard writes them with every other park of its round in one
  // transaction, then releases their backlog and sends them on: a lane's
  // tombstones never reach the sink before their records are durable.
  host_->park(evs);
}

void lane::flush() {
  if (unparking_) {
    // Before the outputs go: whoever sees them sees the store without them.
    unparking_ = false;
    parts().parks.unpark_through(key_, unpark_through_);
    unpark_through_ = 0;
  }
  if (unreleased_ >= release_every_)
    parts().keys.ended(key_, std::exchange(unreleased_, 0));
}

} // namespace keylane::detail
