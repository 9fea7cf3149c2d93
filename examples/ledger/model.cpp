// SPDX-License-Identifier: Apache-2.0
#include "model.hpp"

#include <algorithm>
#include <cstdint>
#include <functional>
#include <queue>

#include <keylane/key.hpp>

namespace ledger {

namespace {

using us = int64_t;

// The figures from each account's last end, in microseconds.
model_figures figures(const std::vector<us>& last) {
  model_figures f;
  std::vector<double> cold;
  for (size_t a = 0; a < last.size(); ++a) {
    auto t = static_cast<double>(last[a]) / 1e6;
    if (a == hot_account)
      f.hot_last_s = t;
    else
      cold.push_back(t);
  }
  if (!cold.empty()) {
    std::sort(cold.begin(), cold.end());
    auto mid = cold.size() / 2;
    f.cold_median_s = cold.size() % 2 == 1 ? cold[mid]
                                           : (cold[mid - 1] + cold[mid]) / 2;
    f.cold_last_s = cold.back();
  }
  return f;
}

} // namespace

model_figures model_hash_partitions(const workload& w, unsigned workers) {
  std::vector<us> clock(std::max(workers, 1u), 0), last(w.names.size(), 0);
  for (const auto& ev : w.events) {
    auto& c = clock[keylane::stable_hash(w.names[ev.account]) % clock.size()];
    c += ev.latency.count();
    last[ev.account] = c;
  }
  return figures(last);
}

model_figures model_key_lanes(const workload& w, size_t cap) {
  // Each account's events run back to back once it holds a lane.
  std::vector<us> busy(w.names.size(), 0), last(w.names.size(), 0);
  std::vector<uint32_t> arrival;
  std::vector<bool> seen(w.names.size(), false);
  for (const auto& ev : w.events) {
    busy[ev.account] += ev.latency.count();
    if (!seen[ev.account]) {
      seen[ev.account] = true;
      arrival.push_back(ev.account);
    }
  }
  std::priority_queue<us, std::vector<us>, std::greater<>> free_at;
  for (size_t i = 0; i < std::max<size_t>(cap, 1); ++i)
    free_at.push(0);
  for (auto account : arrival) {
    auto start = free_at.top();
    free_at.pop();
    last[account] = start + busy[account];
    free_at.push(last[account]);
  }
  return figures(last);
}

} // namespace ledger
