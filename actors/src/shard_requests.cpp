// SPDX-License-Identifier: Apache-2.0
// The CAF requests a shard's handlers make: their numbers, and dropping the
// response handlers of a lane's requests when the lane retires or an
// attempt times out. CAF has no API for these: they go through the one
// adapter of its internals, keylane/detail/caf_internals.hpp.

#include "keylane/detail/shard.hpp"

#include <algorithm>

#include <caf/all.hpp>

#include "keylane/detail/caf_internals.hpp"

namespace keylane::detail {

uint64_t shard::request_mark() const noexcept {
  return caf_internals::last_request_number(*this);
}

void shard::drop_responses(
  const std::vector<std::pair<uint64_t, uint64_t>>& ranges) {
  auto of_lane = [&](const caf::message_id& mid) {
    auto n = caf_internals::number(mid);
    return std::any_of(ranges.begin(), ranges.end(), [n](const auto& r) {
      return n >= r.first && n <= r.second;
    });
  };
  auto& pending = caf_internals::pending_responses(*this);
  for (auto i = pending.begin(); i != pending.end();)
    i = of_lane(i->first) ? pending.erase(i) : std::next(i);
}

void shard::keep_unanswered(
  std::vector<std::pair<uint64_t, uint64_t>>& ranges) {
  std::vector<bool> open(ranges.size(), false);
  for (auto& entry : caf_internals::pending_responses(*this)) {
    auto n = caf_internals::number(entry.first);
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
