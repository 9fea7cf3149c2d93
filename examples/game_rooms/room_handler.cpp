// SPDX-License-Identifier: Apache-2.0
#include "room_handler.hpp"

#include <algorithm>
#include <atomic>

namespace game {

void room_handler::on_activate(const keylane::key& k) {
  // A hot room (2,000 inputs a second) drains at the pace of its shard's
  // round unless it may run many events a turn (docs/game_rooms.md).
  set_turn_budget(turn_budget_);
  logic_.emplace(k.str(), world_.next_room(k.str()), tick_cost_us_);
  // Players stored by an earlier run are not connected to this one.
  logic_->forget_absent(state(), *this);
  keep_ticking();
}

void room_handler::on_event(room_msg& m, keylane::completion<uint8_t> done) {
  // A player waiting on the portal is asked for again at the next tick
  // (room_logic does it), not from a timer of its own: a tick is at most
  // 50 ms away and runs inside an event, where the state may change.
  if (m.what == room_msg::kind::tick) {
    // A tick armed by an earlier lane of this room (it retired before the
    // timer fired) would start a second chain of ticks beside this lane's.
    if (!tick_pending_ || m.seq != tick_token_)
      return done.ok(0);
    tick_pending_ = false;
    world_.retry_leaves();
  }
  if (m.what == room_msg::kind::transfer)
    arrived(m);
  else
    logic_->apply(state(), m, *this);
  keep_ticking();
  done.ok(0);
}

void room_handler::arrived(room_msg& m) {
  // What the player sent while the transfer was on its way waited in the
  // world; it follows the transfer here, in the order sent.
  auto a = world_.arrive(m.player, logic_->name());
  if (!a.here)
    return;
  logic_->apply(state(), m, *this);
  for (auto& held : a.held)
    logic_->apply(state(), held, *this);
}

void room_handler::keep_ticking() {
  if (state().players.empty()) {
    // The pending tick still fires, finds no one and arms no other. The
    // next player starts a new grid: the old one would count every period
    // the room stood empty as late.
    next_tick_ = {};
    if (held_) {
      release();
      held_ = false;
    }
    return;
  }
  if (!held_) {
    // A room with players keeps its lane: its handler holds the tick's
    // schedule, and the room must not be retired to make way for another.
    hold();
    held_ = true;
  }
  if (tick_pending_)
    return;
  // On a fixed grid from the room's first tick; a room that ran a whole
  // period late skips to a period from now instead of bursting.
  // The handler's clock: the test kit's in a test, so ticks can be
  // counted without waiting for them.
  auto now = this->now();
  if (next_tick_ == clock::time_point{}) {
    next_tick_ = now + period_;
  } else {
    next_tick_ += period_;
    if (next_tick_ <= now) {
      ++stats_.ticks_late;
      stats_.ticks_skipped += static_cast<uint64_t>((now - next_tick_) / period_);
      next_tick_ = now + period_;
    }
  }
  arm_tick(next_tick_);
}

void room_handler::arm_tick(clock::time_point due) {
  static std::atomic<uint64_t> tokens{0};
  room_msg tick;
  tick.what = room_msg::kind::tick;
  auto token = tokens.fetch_add(1, std::memory_order_relaxed) + 1;
  tick.seq = token;
  keylane::timer_id id = 0;
  auto delay = std::max(due - now(), clock::duration::zero());
  if (tell_after(delay, current_key(), std::move(tick), id)
      == keylane::errc::none) {
    tick_pending_ = true;
    tick_token_ = token;
    return;
  }
  // Out of timers: a frozen room is worse than a late tick, so try again
  // without one of keylane's timers.
  ++stats_.ticks_rejected;
  tick_pending_ = true;
  tick_token_ = 0; // no tick carries it
  run_later(period_, [this] {
    tick_pending_ = false;
    next_tick_ = {};
    keep_ticking();
  });
}

void room_handler::on_retire(const keylane::key&) {
  // A room with players holds its lane, so this counts only rooms retired
  // at stop; counted so the smoke test can say so.
  if (!state().players.empty())
    ++stats_.occupied_retired;
}

void room_handler::send(uint64_t player,
                        const std::shared_ptr<const std::string>& msg) {
  world_.send(player, msg);
}

void room_handler::left(const std::string& room, uint64_t player) {
  world_.left(room, player);
}

handover room_handler::hand_over(const std::string& from,
                                 const std::string& to, const player& p) {
  // A tell leaves when this tick ends, so the player is in transit until
  // `to` applies it; a full budget (`messages_full`) is a retry next tick.
  return world_.move(from, to, p, true, [&](room_msg m) {
    return tell(keylane::key{to}, std::move(m)) == keylane::errc::none;
  });
}

bool room_handler::present(uint64_t player, const std::string& room) {
  return world_.present(player, room);
}

} // namespace game
