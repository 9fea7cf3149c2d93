// SPDX-License-Identifier: Apache-2.0
#include "player_ids.hpp"

namespace game {

player_ids::player_ids(clock_fn now)
  : now_(std::move(now)),
    last_(static_cast<uint64_t>(now_().time_since_epoch()
                                / std::chrono::milliseconds(1))
          % 100000000 * 1000) {}

uint64_t player_ids::next() { return ++last_; }

} // namespace game
