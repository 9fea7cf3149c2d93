// SPDX-License-Identifier: Apache-2.0
#include "player_ids.hpp"

#include <algorithm>

namespace game {

player_ids::player_ids(clock_fn now) : now_(std::move(now)), last_(0) {}

uint64_t player_ids::next() {
  // The time in microseconds times 1,000, or one more than the last id
  // if that is larger. A run can only get ahead of its clock by handing
  // out more than 1,000 ids in a microsecond (a join takes longer than
  // that), so a later run, which starts at a later time, never meets an
  // id of an earlier one. 64 bits hold it until the year 2554, past the
  // end of libstdc++'s system_clock (2262).
  auto us = std::chrono::duration_cast<std::chrono::microseconds>(
              now_().time_since_epoch())
              .count();
  auto floor = static_cast<uint64_t>(std::max<int64_t>(us, 0)) * 1000;
  auto last = last_.load(std::memory_order_relaxed);
  uint64_t id;
  do
    id = std::max(last + 1, floor);
  while (!last_.compare_exchange_weak(last, id, std::memory_order_relaxed));
  return id;
}

} // namespace game
