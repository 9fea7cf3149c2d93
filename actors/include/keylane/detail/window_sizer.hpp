// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "keylane/detail/event_base.hpp"

namespace keylane::detail {

/// The brain of `window = "auto"`: records how long events took (first
/// attempt to the sink) per 50 ms interval, keeps the last 2 s, and sizes
/// the window as completion rate times tail latency (Little's law: what
/// completes while the slowest event is still running must fit). The tail
/// is the recent p99.9, or the age of the event output waits for when that
/// is longer, so the window grows while a straggler is still out instead of
/// after it came back. Single-threaded (the sink's).
class window_sizer {
public:
  /// How often `resize` runs.
  static constexpr auto tick = std::chrono::milliseconds(50);

  /// Counts an event that took `d` (first attempt to the sink).
  void record(clock::duration d) noexcept;

  /// Closes the current interval and returns the window to use: at least
  /// `floor`, at most `ceiling`. `waiting` is how long output has waited
  /// for its next event (zero when nothing is held back).
  [[nodiscard]] size_t resize(clock::duration waiting, size_t floor,
                              size_t ceiling);

  /// True if an interval saw events (the sink keeps ticking while so).
  [[nodiscard]] bool busy() const noexcept;

private:
  // Geometric buckets: 10 us * 1.25^i, up to ~13 s; the last is open.
  static constexpr size_t buckets = 64;
  struct interval {
    uint64_t count = 0;
    std::array<uint32_t, buckets> hist{};
  };
  static size_t bucket_of(clock::duration d) noexcept;
  static double upper_bound_s(size_t bucket) noexcept;

  static constexpr size_t history = 40; // 2 s of ticks
  std::array<interval, history> ring_{};
  size_t head_ = 0; // the interval being filled
};

} // namespace keylane::detail
