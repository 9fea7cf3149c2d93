// SPDX-License-Identifier: Apache-2.0
#include "keylane/detail/backoff.hpp"

#include <algorithm>
#include <cmath>

namespace keylane::detail {

std::chrono::microseconds backoff_cap(const settings& cfg, uint32_t failed) {
  auto cap_us = static_cast<double>(cfg.max_backoff_ms) * 1000.0;
  auto us = static_cast<double>(cfg.initial_backoff_ms) * 1000.0
            * std::pow(cfg.backoff_multiplier,
                       static_cast<double>(failed > 0 ? failed - 1 : 0));
  // pow may overflow to inf for many attempts: the cap still holds.
  return std::chrono::microseconds{
    static_cast<int64_t>(std::min(us, cap_us))};
}

std::chrono::microseconds backoff_delay(const settings& cfg, uint32_t failed,
                                        uint64_t random_bits) {
  auto cap = backoff_cap(cfg, failed);
  if (cfg.jitter == jitter_mode::none)
    return cap;
  // 53 random bits -> [0, 1]; the draw covers both ends of [0, cap].
  auto unit = static_cast<double>(random_bits >> 11)
              / static_cast<double>((uint64_t{1} << 53) - 1);
  return std::chrono::microseconds{static_cast<int64_t>(
    std::llround(unit * static_cast<double>(cap.count())))};
}

} // namespace keylane::detail
