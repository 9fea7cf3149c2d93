// SPDX-License-Identifier: Apache-2.0
#pragma once

// The one event type every way processes, and the handler work done on it.

#include <cstdint>

namespace keylane::bench {

/// One event: its key, its index among that key's events (0, 1, 2, ... in
/// submission order) and, in open-loop runs, the time it was scheduled to
/// be submitted (steady clock, ns; 0 in closed-loop runs).
struct item {
  uint64_t key = 0;
  uint32_t index = 0;
  int64_t scheduled_ns = 0;
};

/// The handler work of every way: `iters` rounds of xorshift on a value
/// derived from `it`, returned so that the compiler cannot drop it.
/// `iters = 0` is "no work"; see `calibrate_work` for "about 1 us".
[[nodiscard]] inline uint64_t do_work(const item& it, uint64_t iters) noexcept {
  uint64_t x = (it.key * 0x9e3779b97f4a7c15ull) ^ it.index ^ 1u;
  for (uint64_t i = 0; i < iters; ++i) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    asm volatile("" : "+r"(x)); // one dependent chain: no vectorising
  }
  return x;
}

/// Iterations of `do_work` that take about `ns` nanoseconds of CPU on this
/// machine (the fastest of several timed tries, so other load inflates it
/// as little as possible).
[[nodiscard]] uint64_t calibrate_work(uint64_t ns);

/// Nanoseconds on the steady clock.
[[nodiscard]] int64_t now_ns() noexcept;

} // namespace keylane::bench
