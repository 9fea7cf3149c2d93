// SPDX-License-Identifier: Apache-2.0
#include "workload.hpp"

#include <numeric>
#include <random>

namespace ordered_export {

uint64_t stragglers(const workload_spec& spec) noexcept {
  if (spec.items == 0)
    return 0;
  auto n = (spec.items + 50) / 100;
  return n == 0 ? 1 : n;
}

std::vector<export_item> make_items(const workload_spec& spec) {
  // mt19937_64's output is fixed by the standard, the distributions are
  // not; plain modulo keeps the stragglers the same on every library.
  std::mt19937_64 rng{spec.seed};
  std::vector<export_item> out(spec.items);
  for (uint64_t i = 0; i < spec.items; ++i) {
    auto& x = out[i];
    x.index = i;
    x.customer = static_cast<uint32_t>(i % customers);
    x.amount = static_cast<int64_t>(rng() % 100000);
    x.work = spec.fast;
  }
  // A partial Fisher-Yates shuffle: the first `n` positions pick distinct
  // rows.
  std::vector<uint64_t> order(spec.items);
  std::iota(order.begin(), order.end(), uint64_t{0});
  auto n = stragglers(spec);
  for (uint64_t i = 0; i < n; ++i) {
    auto j = i + rng() % (spec.items - i);
    std::swap(order[i], order[j]);
    out[order[i]].work = spec.slow;
  }
  return out;
}

std::string render_line(const export_item& x) {
  return std::to_string(x.index) + ',' + std::to_string(x.customer) + ','
         + std::to_string(x.amount);
}

} // namespace ordered_export
