// SPDX-License-Identifier: Apache-2.0
#pragma once

// The baseline: what a team writes without keylane. One game-loop thread
// owns every room; each 50 ms it applies the queued messages, then ticks
// every open room in turn.

#include <atomic>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <utility>
#include <vector>

#include "room_logic.hpp"
#include "room_msg.hpp"
#include "room_state.hpp"
#include "rooms_engine.hpp"
#include "server_stats.hpp"
#include "world.hpp"

namespace game {

/// The single-loop engine. Rooms' state stays in memory (no keyed state).
///
/// Thread-safety: `submit` from any thread; `start` and `stop` by the owner.
class single_loop_rooms final : public rooms_engine {
public:
  single_loop_rooms(world& w, server_stats& stats, uint32_t tick_cost_us,
                    uint32_t tick_ms)
    : world_(w), stats_(stats), tick_cost_us_(tick_cost_us),
      tick_ms_(tick_ms) {}
  ~single_loop_rooms() override { stop(); }

  /// Starts the loop thread.
  void start();

  bool submit(const std::string& room, room_msg m) override;

  void stop() override;

private:
  struct room {
    room_logic logic;
    room_state state;
  };

  void loop();
  room& at(const std::string& name);

  world& world_;
  server_stats& stats_;
  uint32_t tick_cost_us_;
  uint32_t tick_ms_;
  std::mutex mu_;
  std::vector<std::pair<std::string, room_msg>> inbox_;
  std::unordered_map<std::string, room> rooms_; // the loop thread's
  std::atomic<bool> running_{false};
  std::thread thread_;
};

} // namespace game
