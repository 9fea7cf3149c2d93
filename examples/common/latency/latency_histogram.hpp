// SPDX-License-Identifier: Apache-2.0
#pragma once

// The latency percentiles of the benchmark and of the examples' load tools
// (the exchange's order_entry_load, the game's bots) come from this one
// histogram, so their p50/p99/p99.9 mean the same thing. C++14 as well:
// order_entry_load is built as gnu++14 for QuickFIX's headers.

#include <array>
#include <cstddef>
#include <cstdint>

namespace keylane {
namespace common {

/// Counts of nanosecond values in log-linear buckets (HDR-style): exact
/// below 128 ns, then 64 buckets per power of two up to 2^63 ns, so a
/// quantile is reported at most 1.6 % above the value it stands for; 30 KB,
/// no allocation, O(1) per record.
/// Not thread-safe: one writer (or its owner's lock); merge copies after.
class latency_histogram {
public:
  /// Adds one value; negative values count as 0.
  void record(int64_t ns) noexcept {
    auto v = ns < 0 ? uint64_t{0} : static_cast<uint64_t>(ns);
    ++counts_[index_of(v)];
    ++total_;
    max_ = v > max_ ? v : max_;
  }

  /// Adds every value of `other`.
  void merge(const latency_histogram& other) noexcept;

  /// Forgets everything.
  void clear() noexcept;

  /// Values recorded.
  [[nodiscard]] uint64_t count() const noexcept { return total_; }

  /// The largest value recorded; 0 when empty.
  [[nodiscard]] uint64_t max() const noexcept { return max_; }

  /// The value at quantile `q` (0..1) by nearest rank (the smallest value
  /// with at least q of all at or below it), in ns: the upper edge of its
  /// bucket, at most the largest value recorded; 0 when empty.
  [[nodiscard]] uint64_t quantile(double q) const noexcept;

private:
  static constexpr int sub_bits = 6; // 64 buckets per power of two
  static constexpr uint64_t sub = uint64_t{1} << sub_bits;
  static constexpr std::size_t bucket_count = 2 * sub + (63 - sub_bits) * sub;

  static std::size_t index_of(uint64_t v) noexcept {
    if (v < 2 * sub)
      return static_cast<std::size_t>(v);
    int msb = 63 - __builtin_clzll(v); // >= sub_bits + 1
    int shift = msb - sub_bits;
    return static_cast<std::size_t>(2 * sub
                                    + static_cast<uint64_t>(shift - 1) * sub
                                    + ((v >> shift) - sub));
  }
  static uint64_t upper_edge_of(std::size_t i) noexcept;

  std::array<uint64_t, bucket_count> counts_{};
  uint64_t total_ = 0;
  uint64_t max_ = 0;
};

} // namespace common
} // namespace keylane
