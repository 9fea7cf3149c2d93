// SPDX-License-Identifier: Apache-2.0
#include "room_map.hpp"

namespace game {

namespace {

// Pillars the players collide with; none blocks the straight way from the
// arrival cell to the portal, so a bot heading there gets through by sliding.
bool pillar(int32_t x, int32_t y) noexcept {
  for (int32_t px : {8, 16, 24})
    for (int32_t py : {4, 15})
      if (x >= px && x <= px + 1 && y >= py && y <= py + 1)
        return true;
  return false;
}

} // namespace

bool room_map::wall(int32_t x, int32_t y) noexcept {
  if (x <= 0 || y <= 0 || x >= width - 1 || y >= height - 1)
    return true;
  return pillar(x, y);
}

std::string room_map::rows() {
  std::string out;
  for (int32_t y = 0; y < height; ++y) {
    if (y > 0)
      out += '/';
    for (int32_t x = 0; x < width; ++x)
      out += x == portal_x && y == portal_y ? 'P' : wall(x, y) ? '#' : '.';
  }
  return out;
}

const std::vector<std::pair<int32_t, int32_t>>& room_map::pickup_spots() {
  static const std::vector<std::pair<int32_t, int32_t>> spots{
    {4, 3}, {12, 8}, {20, 12}, {27, 3}, {5, 17}, {14, 17}, {22, 6}, {27, 16}};
  return spots;
}

void room_map::step(int32_t& x, int32_t& y, int32_t dx, int32_t dy) noexcept {
  if (!wall(x + dx, y + dy)) {
    x += dx;
    y += dy;
  } else if (dx != 0 && !wall(x + dx, y)) {
    x += dx;
  } else if (dy != 0 && !wall(x, y + dy)) {
    y += dy;
  }
}

} // namespace game
