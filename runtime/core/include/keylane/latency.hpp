// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>

namespace keylane {

/// End-to-end latency counts, from `submit` accepting an event to the sink
/// handing it to the output: how many events took at most each bound.
struct latency_histogram {
  /// Bucket upper bounds, in microseconds, ascending; the last bucket of
  /// `counts` (index `bounds_us.size()`) has no bound (+Inf).
  static constexpr std::array<uint64_t, 19> bounds_us{
    10,     25,     50,     100,    250,     500,     1000,
    2500,   5000,   10000,  25000,  50000,   100000,  250000,
    500000, 1000000, 2500000, 5000000, 10000000};

  /// Events per bucket (not cumulative): `counts[i]` took more than
  /// `bounds_us[i-1]` and at most `bounds_us[i]`.
  std::array<uint64_t, bounds_us.size() + 1> counts{};
  /// Events counted.
  uint64_t count = 0;
  /// Sum of their latencies.
  std::chrono::nanoseconds sum{0};

  /// Adds `other`'s events to these (histograms of disjoint events).
  latency_histogram& operator+=(const latency_histogram& other) noexcept {
    for (size_t i = 0; i < counts.size(); ++i)
      counts[i] += other.counts[i];
    count += other.count;
    sum += other.sum;
    return *this;
  }
};

} // namespace keylane
