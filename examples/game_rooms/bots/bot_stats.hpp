// SPDX-License-Identifier: Apache-2.0
#pragma once

// What the bots measured, and the report built from it.

#include <atomic>
#include <cstdint>
#include <map>
#include <string>

#include <latency_histogram.hpp>

namespace bots {

/// Counters and samples of one run. Thread-safety: written on the bots' io
/// thread only; the atomics are polled by the main thread.
struct bot_stats {
  uint64_t bots = 0;
  std::atomic<uint64_t> joined{0};
  /// Joins answered "rooms_full" (the room cap was reached).
  std::atomic<uint64_t> join_refused{0};
  uint64_t dropped = 0;
  uint64_t inputs = 0;
  uint64_t snapshots = 0;
  uint64_t lost = 0;
  uint64_t out_of_order = 0;
  uint64_t portals = 0;
  uint64_t arrivals = 0;
  uint64_t refused = 0;
  uint64_t transfers_lost = 0;
  /// Bots between "portal" and their welcome in the next room.
  std::atomic<int64_t> in_transit{0};
  uint64_t errors = 0;
  uint64_t chats = 0;
  /// The hot room's (room-0) first and last tick seen, and the sum of the
  /// scores in those snapshots: a restarted server goes on from its state.
  uint64_t hot_first_tick = 0;
  uint64_t hot_last_tick = 0;
  int64_t hot_first_scores = 0;
  int64_t hot_last_scores = 0;
  /// Input sent -> first snapshot acknowledging it, in nanoseconds.
  keylane::common::latency_histogram latency;
  /// Time between consecutive snapshots a bot got from one room, per room,
  /// in nanoseconds.
  std::map<std::string, keylane::common::latency_histogram> interval;
};

/// The value at quantile `q` (0..1) of `h`, in milliseconds; 0 if empty.
[[nodiscard]] double quantile_ms(const keylane::common::latency_histogram& h,
                                 double q);

/// Tick interval percentiles over all rooms, and the worst room's p99.
struct interval_summary {
  double p50 = 0;
  double p99 = 0;
  double worst_room_p99 = 0;
  std::string worst_room;
  double hot_p99 = 0;
  uint64_t samples = 0;
};

/// Summarises `s.interval`; `hot` names the hot room.
[[nodiscard]] interval_summary intervals(const bot_stats& s,
                                         const std::string& hot);

} // namespace bots
