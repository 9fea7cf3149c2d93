// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>

#include "keylane/latency.hpp"

namespace keylane::detail {

/// The latency histogram behind `stats::latency`. One writer (the sink
/// actor) records with relaxed loads and stores, no read-modify-write and
/// no lock; any thread may take a snapshot, each field exact on its own.
class latency_recorder {
public:
  /// Counts one event that took `d` (single writer).
  void record(std::chrono::nanoseconds d) noexcept {
    auto us = static_cast<uint64_t>(d.count() < 0 ? 0 : d.count() / 1000);
    size_t i = 0;
    while (i < latency_histogram::bounds_us.size()
           && us > latency_histogram::bounds_us[i])
      ++i;
    bump(counts_[i], 1);
    bump(count_, 1);
    bump(sum_ns_, static_cast<uint64_t>(d.count() < 0 ? 0 : d.count()));
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

  std::array<std::atomic<uint64_t>, latency_histogram::bounds_us.size() + 1>
    counts_{};
  std::atomic<uint64_t> count_{0};
  std::atomic<uint64_t> sum_ns_{0};
};

} // namespace keylane::detail
