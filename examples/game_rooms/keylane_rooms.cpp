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
  auto make = [this](const keylane::handler_params&)
    -> std::unique_ptr<keylane::handler_base> {
    return std::make_unique<room_handler>(world_, stats_, cfg_.tick_cost_us);
  };
  auto rt = runtime_type::start(rc, make, [](runtime_type::event_type&) {});
  if (!rt)
    return keylane::render(rt.error());
  rt_ = std::move(*rt);
  running_ = true;
  ticker_ = std::thread{[this] { tick_loop(); }};
  return {};
}

bool keylane_rooms::submit(const std::string& room, room_msg m) {
  return rt_ && rt_->submit(room, std::move(m)).ok();
}

void keylane_rooms::tick_loop() {
  // One thread submits every open room's tick on a fixed 20 Hz grid: the
  // rooms run in parallel on keylane's workers, each tick is an event in
  // the room's order (after the inputs that came before it), and a room
  // with players gets an event every 50 ms, so its lane never idles for
  // the linger time and is not retired between ticks.
  auto period = std::chrono::milliseconds(cfg_.tick_ms);
  auto next = std::chrono::steady_clock::now() + period;
  while (running_) {
    std::this_thread::sleep_until(next);
    next += period;
    auto now = std::chrono::steady_clock::now();
    if (now > next) { // behind by a whole tick: skip, do not burst
      ++stats_.ticks_late;
      next = now + period;
    }
    // At most one tick per room in flight: a room behind its schedule
    // (a slow machine, a huge room) runs fewer ticks, not later ones, so
    // what its players see stays at most one tick old.
    uint64_t skipped = 0;
    for (auto& room : world_.rooms_to_tick(skipped)) {
      room_msg m;
      m.what = room_msg::kind::tick;
      if (!rt_->submit(room, std::move(m)).ok()) {
        ++stats_.ticks_rejected;
        world_.tick_done(room);
      }
    }
    stats_.ticks_skipped += skipped;
    world_.retry_leaves();
  }
}

void keylane_rooms::stop() {
  if (!running_.exchange(false))
    return;
  ticker_.join();
  (void) rt_->drain(std::chrono::seconds(5));
  rt_->stop(); // writes every room's state
}

} // namespace game
