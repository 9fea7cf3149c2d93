// SPDX-License-Identifier: Apache-2.0
#pragma once

// The rules of a room: joins, inputs, chat, leaves, portals, and the tick
// that moves everyone, collects pickups and sends the snapshot. Pure logic
// over a `room_state`; who calls it, and on which thread, is the engine's.

#include <cstddef>
#include <cstdint>
#include <string>

#include "room_io.hpp"
#include "room_msg.hpp"
#include "room_state.hpp"

namespace game {

/// The rules of one room.
///
/// Thread-safety: none; one room's messages are applied one at a time.
class room_logic {
public:
  /// The rules of room `name`, whose portal leads to `next`; each tick
  /// burns `tick_cost_us` of CPU (the simulation a real game would run).
  room_logic(std::string name, std::string next, uint32_t tick_cost_us);

  /// Applies `m` to `s`.
  void apply(room_state& s, room_msg& m, room_io& io);

  /// Asks the next room again to take the players standing on the portal.
  void hand_over_waiting(room_state& s, room_io& io);

  /// Drops players that are not live players of this room (after a restart).
  void forget_absent(room_state& s, room_io& io);

  /// True when a player stands on the portal waiting for the next room.
  [[nodiscard]] static bool has_waiting(const room_state& s) noexcept;

  [[nodiscard]] const std::string& name() const noexcept { return name_; }

  /// The scores of names no longer in the room that a room keeps, the
  /// highest (a name that comes back finds its score while it is among
  /// them). Every name that ever played, kept, made the room's state, and
  /// so each of its events, grow without bound: one client joining and
  /// leaving with fresh names could slow a room down for everyone.
  static constexpr size_t kept_scores = 1000;

private:
  void tick(room_state& s, room_io& io);
  void add(room_state& s, room_io& io, uint64_t id, std::string name,
           uint64_t ack, bool arrived);
  void broadcast(room_state& s, room_io& io, std::string text);
  static void bound_scores(room_state& s);

  std::string name_;
  std::string next_;
  uint32_t tick_cost_us_;
};

} // namespace game
