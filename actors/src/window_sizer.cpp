// SPDX-License-Identifier: Apache-2.0
#include "keylane/detail/window_sizer.hpp"

#include <algorithm>
#include <cmath>

namespace keylane::detail {

namespace {

constexpr double base_us = 10.0;
constexpr double growth = 1.25;
// Headroom over the estimate: rates and tails drift between ticks.
constexpr double margin = 1.2;

} // namespace

size_t window_sizer::bucket_of(clock::duration d) noexcept {
  auto us = std::chrono::duration<double, std::micro>(d).count();
  if (us <= base_us)
    return 0;
  auto i = static_cast<size_t>(std::ceil(std::log(us / base_us)
                                         / std::log(growth)));
  return std::min(i, buckets - 1);
}

double window_sizer::upper_bound_s(size_t bucket) noexcept {
  return base_us * std::pow(growth, static_cast<double>(bucket)) / 1e6;
}

void window_sizer::record(clock::duration d) noexcept {
  auto& cur = ring_[head_];
  ++cur.count;
  ++cur.hist[bucket_of(d)];
}

bool window_sizer::busy() const noexcept {
  return std::any_of(ring_.begin(), ring_.end(),
                     [](const interval& x) { return x.count > 0; });
}

size_t window_sizer::resize(clock::duration waiting, size_t floor,
                            size_t ceiling) {
  // Rate: the busiest interval of the history; a stalled interval (window
  // full, nothing completing) must not talk the window down.
  uint64_t peak = 0, total = 0;
  std::array<uint64_t, buckets> hist{};
  for (const auto& x : ring_) {
    peak = std::max(peak, x.count);
    total += x.count;
    for (size_t i = 0; i < buckets; ++i)
      hist[i] += x.hist[i];
  }
  double tail_s = 0;
  if (total > 0) {
    auto rank = static_cast<uint64_t>(std::ceil(0.999 * total));
    uint64_t seen = 0;
    for (size_t i = 0; i < buckets; ++i) {
      seen += hist[i];
      if (seen >= rank) {
        tail_s = upper_bound_s(i);
        break;
      }
    }
  }
  tail_s = std::max(tail_s, std::chrono::duration<double>(waiting).count());
  auto rate = static_cast<double>(peak)
              / std::chrono::duration<double>(tick).count();
  auto want = rate * tail_s * margin + static_cast<double>(floor);
  head_ = (head_ + 1) % history;
  ring_[head_] = interval{};
  if (!(want < static_cast<double>(ceiling)))
    return ceiling;
  return std::max(floor, static_cast<size_t>(want));
}

} // namespace keylane::detail
