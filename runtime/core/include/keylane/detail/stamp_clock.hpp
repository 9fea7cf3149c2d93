// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <chrono>
#include <cstdint>
#include <type_traits>

#if defined(__x86_64__)
#include <x86intrin.h>
#endif

#include "keylane/detail/event_base.hpp"

namespace keylane::detail {

#if defined(__x86_64__)
__extension__ typedef unsigned __int128 stamp_u128;

/// A thread's anchor and rate (see `stamp_clock`).
struct stamp_state {
  uint64_t tsc = 0;           // the anchor's counter reading
  clock::time_point at;       // and clock::now() then
  uint64_t window_ticks = 0;  // 0: no rate yet, every stamp anchors
  uint64_t ns_per_tick = 0;   // nanoseconds per tick, 32.32 fixed point
  uint64_t since_tsc = 0;     // where the rate's span began
  clock::time_point since;
};

inline thread_local stamp_state stamp_state_of_thread;
#endif

/// Precise time stamps on `clock`'s scale for what every event carries
/// (`event_base::submitted`), at about a third of `clock::now()`'s cost:
/// ~11 ns a read of the CPU's time-stamp counter, scaled, where
/// `clock::now()` costs ~30 ns on the KVM guests measured (kvm-clock).
///
/// Each thread keeps an anchor (a counter reading and `clock::now()` at
/// that moment) and the counter's rate, measured between two anchors at
/// least `calibration` apart. A stamp within `window` of its anchor is the
/// anchor's time plus the counter's ticks since, scaled; any other (no
/// rate yet, the window passed, a counter below the anchor's: another
/// CPU's) reads `clock::now()` and anchors there. So a stamp strays from
/// `clock::now()` by the rate's error over one window plus the anchor's
/// (a few microseconds at worst, tens of nanoseconds as a rule), and a
/// thread pays a precise read once per window.
/// Stamps are not promised to be monotonic across a re-anchoring; nothing
/// orders events by them (sequence numbers do). Where the counter is
/// missing or unsteady (not x86-64, or a rate out of bounds, as on a CPU
/// whose counter stops or drifts), every stamp is `clock::now()`.
/// Thread-safe: each thread uses its own state.
class stamp_clock {
public:
  static_assert(std::is_same_v<clock::duration, std::chrono::nanoseconds>,
                "stamps are counted in the steady clock's nanoseconds");

  /// How long a stamp may extrapolate from its anchor.
  static constexpr auto window = std::chrono::milliseconds(2);
  /// The least span a rate is measured over.
  static constexpr auto calibration = std::chrono::milliseconds(1);

  /// The time now, on `clock`'s scale (see the class comment).
  [[nodiscard]] static clock::time_point now() noexcept {
#if defined(__x86_64__)
    auto& s = stamp_state_of_thread;
    uint64_t t = __rdtsc();
    uint64_t d = t - s.tsc;
    if (d < s.window_ticks)
      return s.at
             + clock::duration{static_cast<int64_t>(
               (static_cast<stamp_u128>(d) * s.ns_per_tick) >> 32)};
    return anchor(t);
#else
    return clock::now();
#endif
  }

private:
#if defined(__x86_64__)

  // A pair of readings is an anchor only if the counter moved by less
  // than this around `clock::now()` (~100 ticks): no preemption, no move
  // to another CPU in between. Its error is then under half of it.
  static constexpr uint64_t max_read_ticks = 4096;

  static clock::time_point anchor(uint64_t t1) noexcept {
    auto& s = stamp_state_of_thread;
    auto now = clock::now();
    uint64_t t2 = __rdtsc();
    s.window_ticks = 0; // until this reading proves a good anchor
    if (t2 < t1 || t2 - t1 > max_read_ticks)
      return now;
    uint64_t t = t1 + (t2 - t1) / 2;
    if (s.since == clock::time_point{} || t < s.since_tsc) {
      s.since = now; // first use, or another CPU's counter: start over
      s.since_tsc = t;
      s.ns_per_tick = 0;
    } else if (now - s.since >= calibration) {
      auto ns = static_cast<stamp_u128>((now - s.since).count());
      auto ticks = t - s.since_tsc;
      // 0.1 to 10 GHz: anything else is a counter that cannot be trusted.
      constexpr stamp_u128 one = uint64_t{1} << 32;
      auto rate = ticks == 0 ? 0 : (ns << 32) / ticks;
      s.ns_per_tick = rate >= one / 10 && rate <= one * 10
                        ? static_cast<uint64_t>(rate)
                        : 0;
      s.since = now;
      s.since_tsc = t;
    }
    if (s.ns_per_tick != 0)
      s.window_ticks = static_cast<uint64_t>(
        (static_cast<stamp_u128>(
           std::chrono::nanoseconds{window}.count())
         << 32)
        / s.ns_per_tick);
    s.tsc = t;
    s.at = now;
    return now;
  }
#endif
};

} // namespace keylane::detail
