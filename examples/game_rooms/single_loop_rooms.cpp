// SPDX-License-Identifier: Apache-2.0
#include "single_loop_rooms.hpp"

#include <chrono>

namespace game {

void single_loop_rooms::start() {
  running_ = true;
  thread_ = std::thread{[this] { loop(); }};
}

bool single_loop_rooms::submit(const std::string& room, room_msg m) {
  std::lock_guard<std::mutex> guard{mu_};
  inbox_.emplace_back(room, std::move(m));
  return true;
}

single_loop_rooms::room& single_loop_rooms::at(const std::string& name) {
  auto i = rooms_.find(name);
  if (i == rooms_.end())
    i = rooms_
          .emplace(name, room{room_logic{name, world_.next_room(name),
                                         tick_cost_us_},
                              room_state{}})
          .first;
  return i->second;
}

void single_loop_rooms::loop() {
  auto period = std::chrono::milliseconds(tick_ms_);
  auto next = std::chrono::steady_clock::now() + period;
  std::vector<std::pair<std::string, room_msg>> batch;
  while (running_) {
    std::this_thread::sleep_until(next);
    next += period;
    auto now = std::chrono::steady_clock::now();
    if (now > next) {
      ++stats_.ticks_late;
      next = now + period;
    }
    // Messages first, then every open room's tick, in turn on this thread:
    // a transfer a tick submits lands in the inbox for the next round.
    {
      std::lock_guard<std::mutex> guard{mu_};
      batch.swap(inbox_);
    }
    for (auto& [name, m] : batch) {
      auto& r = at(name);
      r.logic.apply(r.state, m, world_);
    }
    batch.clear();
    for (auto& name : world_.open_rooms()) {
      auto& r = at(name);
      room_msg tick;
      r.logic.apply(r.state, tick, world_);
    }
    world_.retry_leaves();
  }
}

void single_loop_rooms::stop() {
  if (!running_.exchange(false))
    return;
  thread_.join();
}

} // namespace game
