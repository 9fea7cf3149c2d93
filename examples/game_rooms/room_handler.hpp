// SPDX-License-Identifier: Apache-2.0
#pragma once

// One room as a keylane handler: its `room_state` is keyed state, so a
// room that retired, or a server that restarted, comes back as it was. A
// room ticks itself (a `tell_after` to its own key per tick) and hands a
// player to the next room with a `tell`.

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>

#include <keylane/stateful_handler.hpp>

#include "room_io.hpp"
#include "room_logic.hpp"
#include "room_msg.hpp"
#include "room_state.hpp"
#include "server_stats.hpp"
#include "world.hpp"

namespace game {

/// The handler of one room's lane.
class room_handler final
  : public keylane::stateful_handler<room_msg, uint8_t, room_state>,
    private room_io {
public:
  room_handler(world& w, server_stats& stats, uint32_t tick_cost_us,
               std::chrono::milliseconds period, size_t turn_budget)
    : world_(w), stats_(stats), tick_cost_us_(tick_cost_us),
      period_(period), turn_budget_(turn_budget) {}

  void on_activate(const keylane::key& k) override;

  void on_event(room_msg& m, keylane::completion<uint8_t> done) override;

  void on_retire(const keylane::key& k) override;

private:
  using clock = std::chrono::steady_clock;

  // room_io: the world's answers, except the hand-over, which is a tell.
  void send(uint64_t player,
            const std::shared_ptr<const std::string>& msg) override;
  void left(const std::string& room, uint64_t player) override;
  handover hand_over(const std::string& from, const std::string& to,
                     const player& p) override;
  bool present(uint64_t player, const std::string& room) override;

  void arrived(room_msg& m);
  // Holds the lane and keeps one tick timer pending while the room has
  // players; releases it when the last one left.
  void keep_ticking();
  void arm_tick(clock::time_point due);

  world& world_;
  server_stats& stats_;
  uint32_t tick_cost_us_;
  std::chrono::milliseconds period_;
  size_t turn_budget_;
  std::optional<room_logic> logic_;
  bool held_ = false;
  bool tick_pending_ = false;
  uint64_t tick_token_ = 0; // the `seq` of the pending tick
  clock::time_point next_tick_{};
};

} // namespace game
