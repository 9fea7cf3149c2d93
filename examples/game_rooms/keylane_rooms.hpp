// SPDX-License-Identifier: Apache-2.0
#pragma once

// Rooms on keylane: a room is a key, its lane's handler holds the room in
// keyed state and ticks it at 20 Hz with its own keylane timer.

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>

#include <keylane/runtime.hpp>

#include "room_msg.hpp"
#include "rooms_engine.hpp"
#include "server_stats.hpp"
#include "world.hpp"

namespace game {

/// How the keylane engine is set up.
struct keylane_rooms_settings {
  /// keylane's own settings (threads, cap, state store).
  keylane::settings runtime;
  /// CPU burnt per room per tick, in microseconds.
  uint32_t tick_cost_us = 50;
  /// Time between ticks, in milliseconds (50: 20 Hz).
  uint32_t tick_ms = 50;
  /// Events a room's lane may run in a turn (`set_turn_budget`).
  size_t turn_budget = 1024;
};

/// The keylane engine.
///
/// Thread-safety: `submit` from any thread; `start` and `stop` by the owner.
/// The world submits players' commands; rooms reach each other (portals)
/// and themselves (ticks) through keylane's own messaging.
class keylane_rooms final : public rooms_engine {
public:
  keylane_rooms(world& w, server_stats& stats) : world_(w), stats_(stats) {}
  ~keylane_rooms() override { stop(); }

  /// Starts the runtime; an error message, or empty.
  [[nodiscard]] std::string start(keylane_rooms_settings cfg);

  bool submit(const std::string& room, room_msg m) override;

  void stop() override;

private:
  using runtime_type = keylane::runtime<room_msg, uint8_t>;
  world& world_;
  server_stats& stats_;
  keylane_rooms_settings cfg_;
  std::unique_ptr<runtime_type> rt_;
  std::atomic<bool> stopped_{false};
};

} // namespace game
