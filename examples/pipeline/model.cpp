// SPDX-License-Identifier: Apache-2.0
#include "model.hpp"

#include <algorithm>
#include <cstdint>
#include <functional>
#include <numeric>
#include <queue>
#include <utility>

namespace pipeline_example {

namespace {

using us = int64_t;

// One stage: item `order[k]` arrives at `arrive[order[k]]` (non-decreasing
// along `order`) and starts on the first free slot; returns its ends.
std::vector<us> run_stage(const std::vector<size_t>& order,
                          const std::vector<us>& arrive,
                          const std::vector<us>& work, size_t slots) {
  std::priority_queue<us, std::vector<us>, std::greater<>> free_at;
  for (size_t i = 0; i < std::max<size_t>(slots, 1); ++i)
    free_at.push(0);
  std::vector<us> end(arrive.size());
  for (auto i : order) {
    auto start = std::max(free_at.top(), arrive[i]);
    free_at.pop();
    end[i] = start + work[i];
    free_at.push(end[i]);
  }
  return end;
}

// Submission order: each result leaves once every earlier one has.
std::vector<us> in_order(const std::vector<us>& end) {
  std::vector<us> out(end.size());
  us last = 0;
  for (size_t i = 0; i < end.size(); ++i)
    out[i] = last = std::max(last, end[i]);
  return out;
}

// The most results held at once, each from its end to when it leaves (at
// equal times the leaving first).
size_t peak_held(const std::vector<us>& end, const std::vector<us>& leave) {
  std::vector<std::pair<us, int>> changes;
  for (size_t i = 0; i < end.size(); ++i)
    if (leave[i] > end[i]) {
      changes.emplace_back(end[i], 1);
      changes.emplace_back(leave[i], -1);
    }
  std::sort(changes.begin(), changes.end());
  long held = 0, peak = 0;
  for (const auto& [t, d] : changes) {
    held += d;
    peak = std::max(peak, held);
  }
  return static_cast<size_t>(peak);
}

} // namespace

model_figures model(const std::vector<item>& items, size_t slots,
                    bool each_stage) {
  auto n = items.size();
  std::vector<us> fetch(n), convert(n);
  for (size_t i = 0; i < n; ++i) {
    fetch[i] = items[i].fetch.count();
    convert[i] = items[i].convert.count();
  }
  std::vector<size_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  auto end1 = run_stage(order, std::vector<us>(n, 0), fetch, slots);
  model_figures f;
  std::vector<us> arrive2 = end1;
  if (each_stage) {
    arrive2 = in_order(end1);
    f.held_after_1 = peak_held(end1, arrive2);
  } else {
    // Stage 2 takes items in the order stage 1 ends them.
    std::stable_sort(order.begin(), order.end(),
                     [&](size_t a, size_t b) { return end1[a] < end1[b]; });
  }
  auto end2 = run_stage(order, arrive2, convert, slots);
  auto leave = in_order(end2);
  f.held_at_sink = peak_held(end2, leave);
  f.total_s = n == 0 ? 0.0 : static_cast<double>(leave.back()) / 1e6;
  return f;
}

} // namespace pipeline_example
