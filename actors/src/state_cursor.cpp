// SPDX-License-Identifier: Apache-2.0
// A lane's keyed state: loading it before the handler activates, undoing a
// failed attempt's changes, counting each event once, and writing it.
#include "keylane/detail/state_cursor.hpp"

#include <algorithm>
#include <cstddef>
#include <chrono>
#include <utility>

#include "keylane/detail/logger.hpp"
#include "keylane/detail/messaging.hpp"
#include "keylane/detail/state_record.hpp"
#include "keylane/detail/state_round.hpp"
#include "keylane/detail/state_service.hpp"
#include "keylane/errc.hpp"

namespace keylane::detail {

caf::error state_cursor::load(state_slot* slot, const keylane::key& k,
                              state_service& store, bool exactly_once) {
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Winvalid-offsetof"
  static_assert(offsetof(state_cursor, slot_) + sizeof(slot_) == hot_bytes,
                "the cursor's hot bytes moved (see lane's layout)");
#pragma GCC diagnostic pop
  keeps_messages_ = false;
  if (!slot)
    return {};
  auto got = store.load(k);
  if (!got)
    return std::move(got.error());
  if (*got) {
    auto rec = decode_state_record(**got);
    if (!rec)
      return std::move(rec.error());
    if (auto err = slot->load(&*rec))
      return err;
    rec->state.clear();
    slot->meta = std::move(*rec);
  } else {
    if (auto err = slot->load(nullptr))
      return err;
    slot->meta = state_record{};
  }
  slot_ = slot;
  keeps_messages_ = store.enabled() && exactly_once;
  return {};
}

state_cursor::start state_cursor::begin(event_base& ev, bool rollback,
                                        caf::error& err) {
  redelivered_ = false;
  if (const auto* o = ev.origin()) {
    auto& meta = slot_->meta;
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
        slot_->delivered.emplace_back(o->sender, o->number);
      return start::applied_before;
    }
  }
  has_origin_ = slot_->origin(ev, origin_stream_, origin_pos_);
  if (has_origin_ && origin_pos_ <= slot_->meta.position(origin_stream_)) {
    // The source delivered it again after a crash, and the state holds
    // its change already: applying it again would count it twice.
    redelivered_ = true;
    return start::applied_before;
  }
  if (!rollback)
    return start::ready;
  if (auto e = slot_->keep()) {
    err = std::move(e);
    return start::failed;
  }
  return start::ready;
}

void state_cursor::undo(bool rollback) {
  if (rollback)
    slot_->restore();
}

void state_cursor::note_applied(outcome status, const event_base& ev) {
  if (redelivered_)
    return;
  // A skip moves the source position on but is not counted: a handler
  // that drops events numbered below the count must see it grow only
  // with what the state absorbed.
  if (status == outcome::ok)
    ++slot_->meta.events;
  if (has_origin_)
    slot_->meta.advance(origin_stream_, origin_pos_);
  if (const auto* o = ev.origin())
    end_kept(*o);
}

void state_cursor::end_kept(const message_origin& o) {
  auto& meta = slot_->meta;
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
  slot_->delivered.emplace_back(o.sender, o.number);
}

bool state_cursor::note_finished(uint64_t seq, const event_base* ev,
                                 const settings& pol) {
  if (const auto* o = ev ? ev->origin() : nullptr;
      o && ev->status == outcome::failed)
    end_kept(*o); // failed for good: done, as any failed event is
  applied_seqs_.push_back(seq);
  bool dirtied = mark_dirty();
  if (pol.state_sync_mode == state_sync::every_event
      || (pol.state_checkpoint_events != 0
          && ++since_write_ >= pol.state_checkpoint_events))
    snapshot_due_ = true;
  return dirtied;
}

void state_cursor::forget_delivered(const keylane::key& k, messaging& msg,
                                    std::vector<kept_message>& outbox) {
  auto done = msg.take_delivered(k);
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

bool state_cursor::take_snapshot(const keylane::key& k, state_service& store,
                                 messaging& msg, logger& log,
                                 state_round& r) {
  snapshot_due_ = false;
  if (!slot_ || !store.enabled())
    return false;
  auto bytes = slot_->encode();
  if (!bytes) {
    // Its events stay undurable (a source waiting for them holds its
    // commits): better than writing a state that is not the fold of them.
    log.write(log_level::error,
              "state: key " + k.to_string()
                + " cannot be encoded, so it is not written: "
                + render(bytes.error()));
    return false;
  }
  auto& meta = slot_->meta;
  if (!meta.outbox.empty())
    forget_delivered(k, msg, meta.outbox);
  // Encoded in place: a key that messages many keys has a long inbox,
  // which a copy of the record would copy at every write.
  meta.state = std::move(*bytes);
  meta.taken_at_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                       std::chrono::system_clock::now().time_since_epoch())
                       .count();
  r.writes.push_back(state_entry{k, encode_state_record(meta)});
  meta.state = std::string{}; // not kept beside the live state
  r.seqs = std::move(applied_seqs_);
  applied_seqs_.clear();
  r.sends = std::move(slot_->unsent);
  slot_->unsent.clear();
  r.delivered = std::move(slot_->delivered);
  slot_->delivered.clear();
  dirty_ = false;
  since_write_ = 0;
  return true;
}

uint64_t state_cursor::keep(kept_message m) {
  auto& meta = slot_->meta;
  m.number = ++meta.sent;
  meta.outbox.push_back(std::move(m));
  return meta.outbox.back().number;
}

bool state_cursor::forget_timer(uint64_t number) {
  auto& out = slot_->meta.outbox;
  out.erase(std::remove_if(out.begin(), out.end(),
                           [&](const kept_message& m) {
                             return m.number == number;
                           }),
            out.end());
  return mark_dirty();
}

} // namespace keylane::detail
