// SPDX-License-Identifier: Apache-2.0
#pragma once

// One room as a keylane handler: its `room_state` is keyed state, so a
// room that retired, or a server that restarted, comes back as it was.

#include <cstdint>
#include <optional>

#include <keylane/stateful_handler.hpp>

#include "room_logic.hpp"
#include "room_msg.hpp"
#include "room_state.hpp"
#include "server_stats.hpp"
#include "world.hpp"

namespace game {

/// The handler of one room's lane.
class room_handler final
  : public keylane::stateful_handler<room_msg, uint8_t, room_state> {
public:
  room_handler(world& w, server_stats& stats, uint32_t tick_cost_us)
    : world_(w), stats_(stats), tick_cost_us_(tick_cost_us) {}

  void on_activate(const keylane::key& k) override;

  void on_event(room_msg& m, keylane::completion<uint8_t> done) override;

  void on_retire(const keylane::key& k) override;

private:
  world& world_;
  server_stats& stats_;
  uint32_t tick_cost_us_;
  std::optional<room_logic> logic_;
};

} // namespace game
