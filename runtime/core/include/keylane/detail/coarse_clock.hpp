// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <chrono>
#include <ctime>

#include "keylane/detail/event_base.hpp"

namespace keylane::detail {

/// The steady clock as of the kernel's last tick (CLOCK_MONOTONIC_COARSE,
/// the epoch of `clock`): ~7 ns a read where a precise one costs ~30 ns on
/// the KVM guests measured (docs/performance.md), at the price of lagging
/// by up to one tick (1–4 ms). For per-event times that only a timeout of
/// seconds or a stall log reads; a precise read where a deadline or a
/// measure in microseconds depends on it.
[[nodiscard]] inline clock::time_point coarse_now() noexcept {
  timespec ts{};
  ::clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
  return clock::time_point{std::chrono::duration_cast<clock::duration>(
    std::chrono::seconds{ts.tv_sec} + std::chrono::nanoseconds{ts.tv_nsec})};
}

} // namespace keylane::detail
