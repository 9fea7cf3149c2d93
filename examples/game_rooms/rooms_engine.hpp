// SPDX-License-Identifier: Apache-2.0
#pragma once

// Where room events go: keylane lanes, or one game-loop thread (the
// baseline). The server's front talks to rooms only through this.

#include <string>

#include "room_msg.hpp"

namespace game {

/// Runs rooms.
///
/// Thread-safety: `submit` may be called from any thread, the rooms' own
/// included, and never blocks.
class rooms_engine {
public:
  virtual ~rooms_engine() = default;

  /// Queues `m` for `room`; false when the room's queue is full right now.
  [[nodiscard]] virtual bool submit(const std::string& room, room_msg m) = 0;

  /// Stops ticking and ends the rooms, keeping their state.
  virtual void stop() = 0;
};

} // namespace game
