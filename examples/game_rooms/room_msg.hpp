// SPDX-License-Identifier: Apache-2.0
#pragma once

// What reaches a room: the players' commands, the ticker's ticks, and
// players handed over by another room's portal. One type for every engine,
// so the keylane handler and the single-loop baseline run the same rules.

#include <cstdint>
#include <string>

namespace game {

/// One event of a room (the payload of a room's lane).
struct room_msg {
  /// What happened.
  enum class kind : uint8_t {
    /// A player joins (`player`, `name`).
    join,
    /// A player sets its direction (`player`, `seq`, `dx`, `dy`).
    input,
    /// A player says something to its room (`player`, `text`).
    chat,
    /// A player leaves or disconnected (`player`).
    leave,
    /// The room advances one step and sends its snapshot.
    tick,
    /// A player arrives through a portal (`player`, `name`, `seq`: its last
    /// applied input, so its acknowledgements keep growing).
    transfer,
  };

  kind what = kind::tick;
  uint64_t player = 0;
  uint64_t seq = 0;
  int32_t dx = 0;
  int32_t dy = 0;
  std::string name;
  std::string text;
};

} // namespace game
