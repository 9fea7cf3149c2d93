// SPDX-License-Identifier: Apache-2.0
#pragma once

// An HDR-style latency histogram: log-bucketed with 64 linear sub-buckets
// per power of two, so any recorded value is reported within 1.6 %, from
// nanoseconds to centuries, in 30 KB and O(1) per record.

#include <algorithm>
#include <array>
#include <cstdint>

namespace exchange {
namespace load {

/// Counts of values (nanoseconds here) by bucket. Not thread-safe: one
/// owner records, or the owner's lock guards it.
class latency_histogram {
public:
  /// Counts `v` (negative values count as 0).
  void record(int64_t v) noexcept {
    uint64_t u = v < 0 ? 0 : static_cast<uint64_t>(v);
    ++counts_[index(u)];
    ++total_;
    max_ = std::max(max_, u);
  }

  /// The value at quantile `q` in [0, 1] (the upper edge of its bucket, at
  /// most the largest value recorded); 0 when empty.
  uint64_t quantile(double q) const noexcept {
    if (total_ == 0)
      return 0;
    uint64_t rank = static_cast<uint64_t>(q * static_cast<double>(total_) + 0.5);
    rank = std::max<uint64_t>(1, std::min(rank, total_));
    uint64_t seen = 0;
    for (size_t i = 0; i < counts_.size(); ++i) {
      seen += counts_[i];
      if (seen >= rank)
        return std::min(upper(i), max_);
    }
    return max_;
  }

  uint64_t count() const noexcept { return total_; }
  uint64_t max() const noexcept { return max_; }

private:
  static constexpr int sub_bits = 7; // 128 exact values, then 64 per octave
  static constexpr size_t buckets = 128 + 57 * 64;

  static size_t index(uint64_t v) noexcept {
    if (v < 128)
      return static_cast<size_t>(v);
    int msb = 63 - __builtin_clzll(v);
    int shift = msb - (sub_bits - 1);
    return 128 + static_cast<size_t>(shift - 1) * 64 + ((v >> shift) - 64);
  }
  static uint64_t upper(size_t i) noexcept {
    if (i < 128)
      return i;
    size_t shift = (i - 128) / 64 + 1;
    uint64_t sub = (i - 128) % 64 + 64;
    return ((sub + 1) << shift) - 1;
  }

  std::array<uint64_t, buckets> counts_{};
  uint64_t total_ = 0;
  uint64_t max_ = 0;
};

} // namespace load
} // namespace exchange
