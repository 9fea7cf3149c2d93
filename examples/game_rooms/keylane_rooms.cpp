// SPDX-License-Identifier: Apache-2.0
#include "keylane_rooms.hpp"

#include <chrono>

#include "room_handler.hpp"

namespace game {

std::string keylane_rooms::start(keylane_rooms_settings cfg) {
  cfg_ = std::move(cfg);
  auto& rc = cfg_.runtime;
  rc.order = keylane::order_mode::none; // rooms answer players, not a sink
  rc.output_thread = keylane::output_thread::sink;
  rc.overflow = keylane::overflow_policy::reject; // never block a network thread
  rc.park = keylane::park_mode::none;
  rc.max_attempts = 1;
  // Players are connections and do not survive a restart, so neither need
  // their transfers nor the rooms' ticks (a room with players arms its
  // tick again): plain tells and timers, nothing kept with the state.
  rc.messaging_exactly_once = false;
  auto period = std::chrono::milliseconds(cfg_.tick_ms);
  auto make = [this, period](const keylane::handler_params&)
    -> std::unique_ptr<keylane::handler_base> {
    return std::make_unique<room_handler>(world_, stats_, cfg_.tick_cost_us,
                                          period, cfg_.turn_budget);
  };
  auto rt = runtime_type::start(rc, make, [](runtime_type::event_type&) {});
  if (!rt)
    return keylane::render(rt.error());
  rt_ = std::move(*rt);
  return {};
}

bool keylane_rooms::submit(const std::string& room, room_msg m) {
  return rt_ && rt_->submit(room, std::move(m)).ok();
}

void keylane_rooms::stop() {
  if (!rt_ || stopped_.exchange(true))
    return;
  (void) rt_->drain(std::chrono::seconds(5));
  rt_->stop(); // writes every room's state
}

} // namespace game
