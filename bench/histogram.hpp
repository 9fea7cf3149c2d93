// SPDX-License-Identifier: Apache-2.0
#pragma once

// Latency histogram: fixed size, no allocation when recording.

#include <array>
#include <cstddef>
#include <cstdint>

namespace keylane::bench {

/// Log-linear histogram of nanosecond values: exact below 64 ns, then 32
/// buckets per power of two (at most ~3 % relative error), up to 2^63 ns.
/// Not thread-safe: one writer; merge copies afterwards.
class histogram {
public:
  /// Adds one value; negative values count as 0.
  void record(int64_t ns) noexcept {
    ++counts_[index_of(ns < 0 ? 0 : static_cast<uint64_t>(ns))];
    ++total_;
  }

  /// Adds every value of `other`.
  void merge(const histogram& other) noexcept;

  /// Values recorded.
  [[nodiscard]] uint64_t count() const noexcept { return total_; }

  /// The value at quantile `q` (0..1), in ns: the middle of its bucket;
  /// 0 when empty.
  [[nodiscard]] double quantile(double q) const noexcept;

  /// Forgets everything.
  void clear() noexcept;

private:
  static constexpr int sub_bits = 5;
  static constexpr uint64_t sub = uint64_t{1} << sub_bits; // 32
  static constexpr std::size_t bucket_count = 2 * sub + (63 - sub_bits) * sub;

  static std::size_t index_of(uint64_t v) noexcept {
    if (v < 2 * sub)
      return static_cast<std::size_t>(v);
    int msb = 63 - __builtin_clzll(v); // >= 6
    int shift = msb - sub_bits;
    return static_cast<std::size_t>(2 * sub + (msb - sub_bits - 1) * sub
                               + ((v >> shift) - sub));
  }
  static double lower_bound_of(std::size_t i, double& width) noexcept;

  std::array<uint64_t, bucket_count> counts_{};
  uint64_t total_ = 0;
};

} // namespace keylane::bench
