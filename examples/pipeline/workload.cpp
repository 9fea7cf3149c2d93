// SPDX-License-Identifier: Apache-2.0
#include "workload.hpp"

#include <algorithm>
#include <map>
#include <numeric>
#include <random>

namespace pipeline_example {

std::vector<item> make_items(uint64_t n, uint32_t accounts, uint64_t seed,
                             const timing& t) {
  std::mt19937_64 rng{seed};
  std::vector<item> out(n);
  for (uint64_t i = 0; i < n; ++i) {
    auto& x = out[i];
    x.index = i;
    x.account = static_cast<uint32_t>(rng() % accounts);
    x.amount = static_cast<int64_t>(rng() % 2001) - 1000;
    x.fetch = t.fetch;
    x.convert = t.convert;
  }
  // Exactly 1 %, so every mode and run sees the same stragglers.
  std::vector<uint64_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::shuffle(order.begin(), order.end(), rng);
  auto slow = std::max<uint64_t>(1, n / 100);
  for (uint64_t i = 0; i < slow && i < n; ++i)
    out[order[i]].fetch = t.straggler;
  return out;
}

std::vector<int64_t> sequential_totals(const std::vector<item>& items) {
  std::map<uint32_t, int64_t> total;
  std::vector<int64_t> out;
  out.reserve(items.size());
  for (auto& x : items)
    out.push_back(total[x.account] += cents_of(x));
  return out;
}

} // namespace pipeline_example
