// SPDX-License-Identifier: Apache-2.0
#include "latency_histogram.hpp"

#include <algorithm>
#include <cmath>

namespace keylane {
namespace common {

void latency_histogram::merge(const latency_histogram& other) noexcept {
  for (std::size_t i = 0; i < bucket_count; ++i)
    counts_[i] += other.counts_[i];
  total_ += other.total_;
  max_ = std::max(max_, other.max_);
}

void latency_histogram::clear() noexcept {
  counts_.fill(0);
  total_ = 0;
  max_ = 0;
}

uint64_t latency_histogram::upper_edge_of(std::size_t i) noexcept {
  if (i < 2 * sub)
    return i;
  auto shift = (i - 2 * sub) / sub + 1;
  auto mantissa = (i - 2 * sub) % sub + sub;
  // The top bucket's edge, 2^64 - 1, comes from the shift wrapping to 0.
  return ((mantissa + 1) << shift) - 1;
}

uint64_t latency_histogram::quantile(double q) const noexcept {
  if (total_ == 0)
    return 0;
  auto rank = static_cast<uint64_t>(std::ceil(q * static_cast<double>(total_)));
  rank = std::min(std::max<uint64_t>(rank, 1), total_);
  uint64_t seen = 0;
  for (std::size_t i = 0; i < bucket_count; ++i) {
    seen += counts_[i];
    if (seen >= rank)
      return std::min(upper_edge_of(i), max_);
  }
  return max_;
}

} // namespace common
} // namespace keylane
