// SPDX-License-Identifier: Apache-2.0
#pragma once

// The players' wire format: one text WebSocket frame per command, words
// separated by single spaces (docs/game_rooms.md lists every message).
//
//   join <room> <name>      input <seq> <dx> <dy>      chat <text>      leave

#include <cstdint>
#include <string>
#include <string_view>

namespace game {

/// One command of a player, parsed.
struct client_command {
  enum class kind { join, input, chat, leave };
  kind what = kind::leave;
  std::string room;
  std::string name;
  uint64_t seq = 0;
  int32_t dx = 0;
  int32_t dy = 0;
  std::string text;
};

/// Longest player name, in characters.
inline constexpr size_t max_name = 24;

/// Longest chat line, in characters (Unicode code points, not bytes; 200
/// of them take at most 800 bytes, inside the 1,024-byte frame limit).
inline constexpr size_t max_chat = 200;

/// Parses one frame into `out`; false (and `why`, an error code such as
/// "bad_command" or "bad_name") when it is not a valid command.
[[nodiscard]] bool parse_command(std::string_view frame, client_command& out,
                                 std::string& why);

} // namespace game
