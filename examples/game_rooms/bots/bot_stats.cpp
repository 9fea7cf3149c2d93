// SPDX-License-Identifier: Apache-2.0
#include "bot_stats.hpp"

namespace bots {

double quantile_ms(const keylane::common::latency_histogram& h, double q) {
  return static_cast<double>(h.quantile(q)) / 1e6;
}

interval_summary intervals(const bot_stats& s, const std::string& hot) {
  interval_summary out;
  keylane::common::latency_histogram all;
  for (const auto& [room, h] : s.interval) {
    all.merge(h);
    auto p99 = quantile_ms(h, 0.99);
    if (p99 > out.worst_room_p99) {
      out.worst_room_p99 = p99;
      out.worst_room = room;
    }
    if (room == hot)
      out.hot_p99 = p99;
  }
  out.samples = all.count();
  out.p50 = quantile_ms(all, 0.5);
  out.p99 = quantile_ms(all, 0.99);
  return out;
}

} // namespace bots
