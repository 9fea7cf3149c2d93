// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>

#include "keylane/latency.hpp"

namespace keylane::detail {

// What `latency_recorder::bucket_of` searches: the nanoseconds from which
// a latency exceeds each bound in whole microseconds, padded to 32 with
// thresholds no latency reaches.
constexpr std::array<uint64_t, 32> latency_thresholds() noexcept {
  constexpr auto n = latency_histogram::bounds_us.size();
  static_assert(n < 32, "bucket_of searches 32 thresholds");
  std::array<uint64_t, 32> t{};
  for (size_t i = 0; i < t.size(); ++i)
    t[i] = i < n ? (latency_histogram::bounds_us[i] + 1) * 1000 : UINT64_MAX;
  return t;
}

/// The latency histogram behind `stats::latency`. One writer (the sink
/// actor) records with relaxed loads and stores, no read-modify-write and
/// no lock; any thread may take a snapshot, each field exact on its own.
class latency_recorder {
public:
  /// Counts one event that took `d` (single writer).
  void record(std::chrono::nanoseconds d) noexcept {
    auto ns = static_cast<uint64_t>(d.count() < 0 ? 0 : d.count());
    bump(counts_[bucket_of(ns)], 1);
    bump(count_, 1);
    bump(sum_ns_, ns);
  }

  /// The bucket of a latency of `ns` nanoseconds: the first whose bound
  /// the whole microseconds in it do not exceed (the last: none did).
  /// A fixed five-step search with no division, where scanning the bounds
  /// cost the sink ~80 instructions per event.
  [[nodiscard]] static size_t bucket_of(uint64_t ns) noexcept {
    // `us > bound` for us = ns / 1000 is `ns >= (bound + 1) * 1000`: the
    // bucket is the number of these thresholds `ns` reaches.
    size_t i = 0;
    for (size_t step = 16; step > 0; step >>= 1)
      if (thresholds_[i + step - 1] <= ns)
        i += step;
    return i;
  }

  /// The counts so far.
  [[nodiscard]] latency_histogram snapshot() const noexcept {
    latency_histogram h;
    for (size_t i = 0; i < counts_.size(); ++i)
      h.counts[i] = counts_[i].load(std::memory_order_relaxed);
    h.count = count_.load(std::memory_order_relaxed);
    h.sum = std::chrono::nanoseconds{
      static_cast<int64_t>(sum_ns_.load(std::memory_order_relaxed))};
    return h;
  }

private:
  static void bump(std::atomic<uint64_t>& x, uint64_t n) noexcept {
    x.store(x.load(std::memory_order_relaxed) + n, std::memory_order_relaxed);
  }

  static constexpr auto thresholds_ = latency_thresholds();

  std::array<std::atomic<uint64_t>, latency_histogram::bounds_us.size() + 1>
    counts_{};
  std::atomic<uint64_t> count_{0};
  std::atomic<uint64_t> sum_ns_{0};
};

} // namespace keylane::detail
