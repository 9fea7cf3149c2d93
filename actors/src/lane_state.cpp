// SPDX-License-Identifier: Apache-2.0
// A lane's keyed state: loading it before the handler activates, undoing a
// failed attempt's changes, counting each event once, and writing it.

#include <algorithm>
#include <chrono>
#include <utility>

#include "keylane/detail/lane.hpp"
#include "keylane/detail/live_settings.hpp"
#include "keylane/detail/logger.hpp"
#include "keylane/detail/messaging.hpp"
#include "keylane/detail/payload_ops.hpp"
#include "keylane/detail/shard.hpp"
#include "keylane/detail/state_record.hpp"
#include "keylane/detail/state_service.hpp"
#include "keylane/errc.hpp"

namespace keylane::detail {

bool lane::load_state() {
  keeps_messages_ = false;
  auto* slot = handler_->keyed_state();
  if (!slot)
    return true;
  auto fail = [&](const caf::error& err) {
    activation_error_ = "the state of key " + key_.to_string()
                        + " could not be loaded: " + render(err);
    return false;
  };
  auto got = parts_.state.load(key_);
  if (!got)
    return fail(got.error());
  if (*got) {
    auto rec = decode_state_record(**got);
    if (!rec)
      return fail(rec.error());
    if (auto err = slot->load(&*rec))
      return fail(err);
    rec->state.clear();
    slot->meta = std::move(*rec);
  } else {
    if (auto err = slot->load(nullptr))
      return fail(err);
    slot->meta = state_record{};
  }
  state_ = slot;
  keeps_messages_ = parts_.state.enabled() && parts_.cfg.messaging_exactly_once
                    && parts_.ops.keep_message != nullptr;
  return true;
}

bool lane::begin_state_attempt() {
  redelivered_ = false;
  if (const auto* o = current_->origin()) {
    auto& meta = state_->meta;
    bool done_before =
      o->timer ? std::none_of(meta.outbox.begin(), meta.outbox.end(),
                              [&](const kept_message& m) {
                                return m.number == o->number;
                              })
               : o->number <= meta.received(o->sender);
    if (done_before) {
      // Sent again after a restart, and the state holds it already (a
      // timer: fired into it, or cancelled). A sender forgets a message
      // once that is written.
      redelivered_ = true;
      if (!o->timer)
        state_->delivered.emplace_back(o->sender, o->number);
      settle(outcome::skipped, {}, false);
      return false;
    }
  }
  has_origin_ = state_->origin(*current_, origin_stream_, origin_pos_);
  if (has_origin_ && origin_pos_ <= state_->meta.position(origin_stream_)) {
    // The source delivered it again after a crash, and the state holds
    // its change already: applying it again would count it twice.
    redelivered_ = true;
    settle(outcome::skipped, {}, false);
    return false;
  }
  if (!policy().state_rollback)
    return true;
  if (auto err = state_->keep()) {
    settle(outcome::failed,
           "the state of key " + key_.to_string()
             + " could not be copied before the attempt: " + render(err),
           true);
    return false;
  }
  return true;
}

void lane::undo_state() {
  if (policy().state_rollback)
    state_->restore();
}

void lane::note_applied(outcome status) {
  if (redelivered_)
    return;
  // A skip moves the source position on but is not counted: a handler
  // that drops events numbered below the count must see it grow only
  // with what the state absorbed.
  if (status == outcome::ok)
    ++state_->meta.events;
  if (has_origin_)
    state_->meta.advance(origin_stream_, origin_pos_);
  if (const auto* o = current_->origin())
    end_kept(*o);
}

void lane::end_kept(const message_origin& o) {
  auto& meta = state_->meta;
  if (o.timer) {
    // Fired into the state: out of the record in the same write.
    meta.outbox.erase(std::remove_if(meta.outbox.begin(), meta.outbox.end(),
                                     [&](const kept_message& m) {
                                       return m.number == o.number;
                                     }),
                      meta.outbox.end());
    return;
  }
  meta.receive(o.sender, o.number);
  state_->delivered.emplace_back(o.sender, o.number);
}

void lane::mark_state_dirty() {
  if (!state_dirty_) {
    state_dirty_ = true;
    host_->state_dirty(id_);
  }
}

void lane::note_finished(uint64_t seq) {
  if (!parts_.state.enabled())
    return;
  if (!state_) {
    // No state changed, but the event's source may wait to hear that it
    // is durable: it is, as soon as what came before it is. A kept message
    // is then delivered as far as a key without state can take it.
    host_->state_out().seqs.push_back(seq);
    if (const auto* o = current_ ? current_->origin() : nullptr)
      host_->state_out().delivered.emplace_back(o->sender, o->number);
    return;
  }
  if (const auto* o = current_ ? current_->origin() : nullptr;
      o && current_->status == outcome::failed)
    end_kept(*o); // failed for good: done, as any failed event is
  applied_seqs_.push_back(seq);
  mark_state_dirty();
  const auto& pol = policy();
  if (pol.state_sync_mode == state_sync::every_event
      || (pol.state_checkpoint_events != 0
          && ++since_write_ >= pol.state_checkpoint_events))
    snapshot_due_ = true;
}

void lane::forget_delivered(std::vector<kept_message>& outbox) {
  auto done = parts_.msg.take_delivered(key_);
  if (done.empty())
    return;
  std::sort(done.begin(), done.end());
  outbox.erase(std::remove_if(outbox.begin(), outbox.end(),
                              [&](const kept_message& m) {
                                return std::binary_search(
                                  done.begin(), done.end(), m.number);
                              }),
               outbox.end());
}

void lane::checkpoint() {
  if (!state_ || !state_dirty_)
    return;
  if (current_)
    snapshot_due_ = true; // between attempts or running: after it ends
  else
    take_snapshot();
}

void lane::take_snapshot() {
  snapshot_due_ = false;
  if (!state_ || !parts_.state.enabled())
    return;
  auto bytes = state_->encode();
  if (!bytes) {
    // Its events stay undurable (a source waiting for them holds its
    // commits): better than writing a state that is not the fold of them.
    parts_.log.write(log_level::error,
                     "state: key " + key_.to_string()
                       + " cannot be encoded, so it is not written: "
                       + render(bytes.error()));
    return;
  }
  auto& meta = state_->meta;
  if (!meta.outbox.empty())
    forget_delivered(meta.outbox);
  // Encoded in place: a key that messages many keys has a long inbox,
  // which a copy of the record would copy at every write.
  meta.state = std::move(*bytes);
  meta.taken_at_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                       std::chrono::system_clock::now().time_since_epoch())
                       .count();
  state_round r;
  r.writes.push_back(state_entry{key_, encode_state_record(meta)});
  meta.state = std::string{}; // not kept beside the live state
  r.seqs = std::move(applied_seqs_);
  applied_seqs_.clear();
  r.sends = std::move(state_->unsent);
  state_->unsent.clear();
  r.delivered = std::move(state_->delivered);
  state_->delivered.clear();
  state_dirty_ = false;
  since_write_ = 0;
  if (policy().state_sync_mode == state_sync::every_event) {
    // The output waits for the disk, as asked: it leaves in `flush`.
    if (auto err = parts_.state.write_now(std::move(r)))
      parts_.log.write(log_level::error, "state: " + render(err));
    return;
  }
  host_->stage_state(std::move(r));
}

} // namespace keylane::detail
