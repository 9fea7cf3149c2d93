// SPDX-License-Identifier: Apache-2.0
#pragma once

// What a room's rules need from the server around them: sending to a
// player, telling it a player left, handing a player to the next room.
// The keylane handler and the single-loop baseline give the same answers
// through different plumbing.

#include <cstdint>
#include <memory>
#include <string>

#include "room_state.hpp"

namespace game {

/// The answer to "take this player into the next room".
enum class handover {
  /// The next room has the player now; remove it here.
  accepted,
  /// The next room cannot open (the room cap is reached): keep the player.
  refused,
  /// The next room's queue is full right now: keep the player, ask again.
  retry,
};

/// The server as a room sees it. Called on the room's own thread.
class room_io {
public:
  virtual ~room_io() = default;

  /// Sends `msg` to `player` (dropped if it disconnected).
  virtual void send(uint64_t player,
                    const std::shared_ptr<const std::string>& msg) = 0;

  /// `player` is no longer in `room`.
  virtual void left(const std::string& room, uint64_t player) = 0;

  /// Moves `p` from `from` into `to`.
  virtual handover hand_over(const std::string& from, const std::string& to,
                             const player& p) = 0;

  /// True when `player` is a live player of this server in `room` (a room
  /// loaded after a restart drops the players of the previous run).
  virtual bool present(uint64_t player, const std::string& room) = 0;
};

} // namespace game
