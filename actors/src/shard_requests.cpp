// SPDX-License-Identifier: Apache-2.0
// The CAF requests a shard's handlers make: their numbers, and dropping the
// response handlers of a lane's requests when the lane retires or an
// attempt times out. These read two protected members of CAF 0.17.6's
// `scheduled_actor` (`last_request_id_`, `multiplexed_responses_`), which
// a shard, as a CAF actor, may use; keep every such use in this file.

#include "keylane/detail/shard.hpp"

#include <algorithm>

#include <caf/all.hpp>

namespace keylane::detail {

uint64_t shard::request_mark() const noexcept {
  return last_request_id_.integer_value() & caf::message_id::request_id_mask;
}

void shard::drop_responses(
  const std::vector<std::pair<uint64_t, uint64_t>>& ranges) {
  auto of_lane = [&](const caf::message_id& mid) {
    auto n = mid.integer_value() & caf::message_id::request_id_mask;
    return std::any_of(ranges.begin(), ranges.end(), [n](const auto& r) {
      return n >= r.first && n <= r.second;
    });
  };
  auto& pending = multiplexed_responses_;
  for (auto i = pending.begin(); i != pending.end();)
    i = of_lane(i->first) ? pending.erase(i) : std::next(i);
}

void shard::keep_unanswered(
  std::vector<std::pair<uint64_t, uint64_t>>& ranges) {
  std::vector<bool> open(ranges.size(), false);
  for (auto& entry : multiplexed_responses_) {
    auto n = entry.first.integer_value() & caf::message_id::request_id_mask;
    for (size_t i = 0; i < ranges.size(); ++i)
      if (n >= ranges[i].first && n <= ranges[i].second)
        open[i] = true;
  }
  size_t kept = 0;
  for (size_t i = 0; i < ranges.size(); ++i)
    if (open[i])
      ranges[kept++] = ranges[i];
  ranges.resize(kept);
}

} // namespace keylane::detail
