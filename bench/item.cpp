// SPDX-License-Identifier: Apache-2.0
#include "item.hpp"

#include <algorithm>
#include <chrono>

namespace keylane::bench {

int64_t now_ns() noexcept {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
           std::chrono::steady_clock::now().time_since_epoch())
    .count();
}

uint64_t calibrate_work(uint64_t ns) {
  if (ns == 0)
    return 0;
  constexpr uint64_t probe = 200000;
  int64_t best = INT64_MAX;
  uint64_t sink = 0;
  for (int attempt = 0; attempt < 15; ++attempt) {
    auto t0 = now_ns();
    sink += do_work(item{static_cast<uint64_t>(attempt), 0, 0}, probe);
    best = std::min(best, now_ns() - t0);
  }
  asm volatile("" : : "r"(sink));
  auto iters = static_cast<double>(probe) * static_cast<double>(ns)
               / static_cast<double>(std::max<int64_t>(best, 1));
  return std::max<uint64_t>(1, static_cast<uint64_t>(iters + 0.5));
}

} // namespace keylane::bench
