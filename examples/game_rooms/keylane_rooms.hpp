// SPDX-License-Identifier: Apache-2.0
#pragma once

// Rooms on keylane: a room is a key, its lane's handler holds the room in
// keyed state, a ticker thread submits a `tick` to every open room at 20 Hz.

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>

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
};

/// The keylane engine.
///
/// Thread-safety: `submit` from any thread; `start` and `stop` by the owner.
class keylane_rooms final : public rooms_engine {
public:
  keylane_rooms(world& w, server_stats& stats) : world_(w), stats_(stats) {}
  ~keylane_rooms() override { stop(); }

  /// Starts the runtime and the ticker; an error message, or empty.
  [[nodiscard]] std::string start(keylane_rooms_settings cfg);

  bool submit(const std::string& room, room_msg m) override;

  void stop() override;

private:
  void tick_loop();

  using runtime_type = keylane::runtime<room_msg, uint8_t>;
  world& world_;
  server_stats& stats_;
  keylane_rooms_settings cfg_;
  // Set once, before any event is submitted; handlers read it to hand a
  // player to another room (the runtime does not offer itself to them).
  std::unique_ptr<runtime_type> rt_;
  std::atomic<bool> running_{false};
  std::thread ticker_;
};

} // namespace game
