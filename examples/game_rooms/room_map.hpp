// SPDX-License-Identifier: Apache-2.0
#pragma once

// The one map every room uses: walls, a portal to the next room, the spots
// where pickups respawn. Fixed, so the page and the bots can draw and steer
// without asking.

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace game {

/// The room layout.
struct room_map {
  static constexpr int32_t width = 32;
  static constexpr int32_t height = 20;
  static constexpr int32_t portal_x = 29;
  static constexpr int32_t portal_y = 10;
  static constexpr int32_t arrival_x = 2;
  static constexpr int32_t arrival_y = 10;

  /// True for a wall cell (and anything outside the map).
  [[nodiscard]] static bool wall(int32_t x, int32_t y) noexcept;

  /// The rows, '#' wall, '.' floor, 'P' portal, joined by '/'.
  [[nodiscard]] static std::string rows();

  /// Where pickups respawn.
  [[nodiscard]] static const std::vector<std::pair<int32_t, int32_t>>&
  pickup_spots();

  /// Moves (x, y) one step by (dx, dy), sliding along walls.
  static void step(int32_t& x, int32_t& y, int32_t dx, int32_t dy) noexcept;
};

} // namespace game
