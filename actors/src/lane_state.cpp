// SPDX-License-Identifier: Apache-2.0
// A lane's keyed state, as the lane drives it: the cursor (`state_`,
// state_cursor.cpp) holds it; here the lane hands it the runtime's
// services, settles the attempts it refuses, and tells its shard when the
// state is dirty or has a write for it.

#include <utility>

#include "keylane/detail/lane.hpp"
#include "keylane/detail/live_settings.hpp"
#include "keylane/detail/logger.hpp"
#include "keylane/detail/payload_ops.hpp"
#include "keylane/detail/shard.hpp"
#include "keylane/detail/state_round.hpp"
#include "keylane/detail/state_service.hpp"
#include "keylane/errc.hpp"

namespace keylane::detail {

bool lane::load_state() {
  auto err = state_.load(handler_->keyed_state(), key_, parts().state,
                         parts().cfg.messaging_exactly_once
                           && parts().ops.keep_message != nullptr);
  if (!err)
    return true;
  activation_.fail("the state of key " + key_.to_string()
                   + " could not be loaded: " + render(err));
  return false;
}

bool lane::begin_state_attempt() {
  caf::error err;
  switch (state_.begin(*current_, policy().state_rollback, err)) {
    case state_cursor::start::ready:
      return true;
    case state_cursor::start::applied_before:
      settle(outcome::skipped, {}, false);
      return false;
    case state_cursor::start::failed:
      break;
  }
  settle(outcome::failed,
         "the state of key " + key_.to_string()
           + " could not be copied before the attempt: " + render(err),
         true);
  return false;
}

void lane::undo_state() {
  state_.undo(policy().state_rollback);
}

void lane::mark_state_dirty() {
  if (state_.mark_dirty())
    host_->state_dirty(id_);
}

void lane::note_finished(uint64_t seq) {
  if (!parts().state.enabled())
    return;
  if (!state_.active()) {
    // No state changed, but the event's source may wait to hear that it
    // is durable: it is, as soon as what came before it is. A kept message
    // is then delivered as far as a key without state can take it.
    host_->state_out().seqs.push_back(seq);
    if (const auto* o = current_ ? current_->origin() : nullptr)
      host_->state_out().delivered.emplace_back(o->sender, o->number);
    return;
  }
  if (state_.note_finished(seq, current_.get(), policy()))
    host_->state_dirty(id_);
}

void lane::checkpoint() {
  if (state_.checkpoint(current_ != nullptr))
    take_snapshot();
}

void lane::take_snapshot() {
  state_round r;
  if (!state_.take_snapshot(key_, parts().state, parts().msg, parts().log, r))
    return;
  if (policy().state_sync_mode == state_sync::every_event) {
    // The output waits for the disk, as asked: it leaves in `flush`.
    auto seqs = r.seqs;
    if (auto err = parts().state.write_now(std::move(r))) {
      // Only at stop, with the store refusing writes: the events whose
      // changes it held are not delivered; stop lists them.
      parts().log.write(log_level::error,
                        "state: " + render(err) + "; the state of key "
                          + key_.to_string() + " after "
                          + std::to_string(seqs.size())
                          + " event(s) could not be written: they are not "
                            "delivered, and stop lists them");
      host_->withhold(seqs);
    }
    return;
  }
  host_->stage_state(std::move(r));
}

} // namespace keylane::detail
