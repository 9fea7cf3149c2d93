// SPDX-License-Identifier: Apache-2.0
#include "histogram.hpp"

#include <cmath>

namespace keylane::bench {

void histogram::merge(const histogram& other) noexcept {
  for (size_t i = 0; i < bucket_count; ++i)
    counts_[i] += other.counts_[i];
  total_ += other.total_;
}

void histogram::clear() noexcept {
  counts_.fill(0);
  total_ = 0;
}

double histogram::lower_bound_of(size_t i, double& width) noexcept {
  if (i < 2 * sub) {
    width = 1;
    return static_cast<double>(i);
  }
  auto j = i - 2 * sub;
  auto octave = j / sub;       // msb - sub_bits - 1
  auto mantissa = j % sub + sub;
  auto shift = static_cast<int>(octave) + 1;
  width = std::ldexp(1.0, shift);
  return std::ldexp(static_cast<double>(mantissa), shift);
}

double histogram::quantile(double q) const noexcept {
  if (total_ == 0)
    return 0;
  auto rank = static_cast<uint64_t>(std::ceil(q * static_cast<double>(total_)));
  if (rank < 1)
    rank = 1;
  uint64_t seen = 0;
  for (size_t i = 0; i < bucket_count; ++i) {
    seen += counts_[i];
    if (seen >= rank) {
      double width = 0;
      double lo = lower_bound_of(i, width);
      return width <= 1 ? lo : lo + width / 2;
    }
  }
  return 0;
}

} // namespace keylane::bench
