// SPDX-License-Identifier: Apache-2.0
#pragma once

// Prices on the wire are decimals (FIX Price is a float field); inside the
// books they are whole ticks, so that comparisons and fills are exact.

#include <cmath>
#include <cstdint>

namespace exchange {

/// The exchange's tick: every price is a whole number of cents.
constexpr double tick_size = 0.01;

/// `price` in ticks, or -1 when it is not a positive whole number of ticks.
inline int64_t to_ticks(double price) {
  if (!(price > 0) || price > 1e9)
    return -1;
  auto ticks = std::llround(price / tick_size);
  if (std::fabs(static_cast<double>(ticks) * tick_size - price) > 1e-7)
    return -1;
  return ticks;
}

/// The decimal price of `ticks`.
inline double to_price(int64_t ticks) {
  return static_cast<double>(ticks) * tick_size;
}

} // namespace exchange
