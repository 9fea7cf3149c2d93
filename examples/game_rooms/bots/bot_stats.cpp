// SPDX-License-Identifier: Apache-2.0
#include "bot_stats.hpp"

#include <algorithm>
#include <cmath>

namespace bots {

double percentile(std::vector<double>& xs, double p) {
  if (xs.empty())
    return 0;
  std::sort(xs.begin(), xs.end());
  auto i = static_cast<size_t>(std::ceil(p * static_cast<double>(xs.size())));
  return xs[std::min(xs.size() - 1, i == 0 ? 0 : i - 1)];
}

interval_summary intervals(bot_stats& s, const std::string& hot) {
  interval_summary out;
  std::vector<double> all;
  for (auto& [room, xs] : s.interval_ms) {
    all.insert(all.end(), xs.begin(), xs.end());
    auto p99 = percentile(xs, 0.99);
    if (p99 > out.worst_room_p99) {
      out.worst_room_p99 = p99;
      out.worst_room = room;
    }
    if (room == hot)
      out.hot_p99 = p99;
  }
  out.samples = all.size();
  out.p50 = percentile(all, 0.5);
  out.p99 = percentile(all, 0.99);
  return out;
}

} // namespace bots
