// SPDX-License-Identifier: Apache-2.0
#pragma once

// Everything a room keeps, as keylane's keyed state: a room that retired, or
// a server that restarted, comes back with its tick, scores, pickups and
// (within one server run) its players where they stood.

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <caf/meta/type_name.hpp>

namespace game {

/// A player inside a room.
struct player {
  uint64_t id = 0;
  std::string name;
  int32_t x = 0;
  int32_t y = 0;
  int32_t dx = 0;
  int32_t dy = 0;
  /// The sequence number of the last input applied (shown in snapshots).
  uint64_t ack = 0;
  /// Standing on the portal, waiting for the next room to take it.
  bool leaving = false;
};

/// A pickup: active when the room's tick reached `respawn_tick`.
struct pickup {
  int32_t x = 0;
  int32_t y = 0;
  uint64_t respawn_tick = 0;
};

/// A room, as stored between its lane's lives.
struct room_state {
  /// Ticks run so far (snapshots carry it; it never goes back).
  uint64_t tick = 0;
  std::vector<player> players;
  /// Points per player name, kept after the player left.
  std::map<std::string, int64_t> scores;
  std::vector<pickup> pickups;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, player& x) {
  return f(caf::meta::type_name("player"), x.id, x.name, x.x, x.y, x.dx, x.dy,
           x.ack, x.leaving);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, pickup& x) {
  return f(caf::meta::type_name("pickup"), x.x, x.y, x.respawn_tick);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, room_state& x) {
  return f(caf::meta::type_name("room_state"), x.tick, x.players, x.scores,
           x.pickups);
}

} // namespace game
