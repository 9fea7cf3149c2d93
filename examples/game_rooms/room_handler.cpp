// SPDX-License-Identifier: Apache-2.0
#include "room_handler.hpp"

namespace game {

void room_handler::on_activate(const keylane::key& k) {
  logic_.emplace(k.str(), world_.next_room(k.str()), tick_cost_us_);
  // Players stored by an earlier run are not connected to this one.
  logic_->forget_absent(state(), world_);
}

void room_handler::on_event(room_msg& m, keylane::completion<uint8_t> done) {
  // A player waiting on the portal is asked for again at the next tick
  // (room_logic does it), not from a timer of its own: a tick is at most
  // 50 ms away and runs inside an event, where the state may change.
  logic_->apply(state(), m, world_);
  if (m.what == room_msg::kind::tick)
    world_.tick_done(logic_->name());
  done.ok(0);
}

void room_handler::on_retire(const keylane::key&) {
  // With the room cap below keylane's key cap this stays 0; counted so the
  // smoke test can say so.
  if (!state().players.empty())
    ++stats_.occupied_retired;
}

} // namespace game
