// SPDX-License-Identifier: Apache-2.0
#include "model.hpp"

#include <algorithm>
#include <cstdint>
#include <functional>
#include <queue>
#include <utility>

namespace ordered_export {

reference model(const std::vector<export_item>& items, size_t slots,
                const model_spec& spec) {
  using us = int64_t;
  std::priority_queue<us, std::vector<us>, std::greater<>> free_at;
  for (size_t i = 0; i < std::max<size_t>(slots, 1); ++i)
    free_at.push(0);
  std::vector<us> finish(items.size()), delivered(items.size());
  us last_start = 0, last_delivery = 0;
  for (size_t i = 0; i < items.size(); ++i) {
    auto start = std::max(free_at.top(), last_start);
    free_at.pop();
    if (spec.window != 0 && i >= spec.window)
      start = std::max(start, delivered[i - spec.window]);
    finish[i] = start + static_cast<us>(items[i].work.count());
    free_at.push(finish[i]);
    last_start = start;
    // In global order a result leaves once every earlier one has.
    last_delivery = std::max(last_delivery, finish[i]);
    delivered[i] = spec.global ? last_delivery : finish[i];
  }
  // A result is held from its end to its delivery: the peak is the most
  // such intervals open at once (+1 at an end, -1 at a delivery; at equal
  // times the delivery first).
  std::vector<std::pair<us, int>> changes;
  for (size_t i = 0; i < items.size(); ++i)
    if (delivered[i] > finish[i]) {
      changes.emplace_back(finish[i], 1);
      changes.emplace_back(delivered[i], -1);
    }
  std::sort(changes.begin(), changes.end());
  long held = 0, peak = 0;
  for (const auto& [t, d] : changes) {
    held += d;
    peak = std::max(peak, held);
  }
  us total = 0;
  for (auto t : delivered)
    total = std::max(total, t);
  return reference{static_cast<double>(total) / 1e6,
                   static_cast<size_t>(peak)};
}

} // namespace ordered_export
