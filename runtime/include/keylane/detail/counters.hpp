// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <atomic>
#include <cstdint>

#include "keylane/detail/latency_recorder.hpp"

// The counters keylane's actors publish, listed once: this list makes the
// atomics below, `engine::snapshot`'s copy into `keylane::stats`, and the
// Prometheus families of the metrics endpoint. Columns: the `stats` field,
// the metric type, the metric name (empty: the endpoint builds that one by
// hand) and its help text. The names are a contract with users'
// dashboards (docs/metrics.md): add new ones, never rename or retype one.
#define KEYLANE_PUBLISHED_COUNTERS(X)                                          \
  X(ok, Counter, "", "")                                                       \
  X(skipped, Counter, "", "")                                                  \
  X(failed, Counter, "", "")                                                   \
  X(parked, Counter, "", "")                                                   \
  X(retries, Counter, "keylane_retries_total",                                 \
    "Handler attempts beyond the first, over all events.")                    \
  X(replayed, Counter, "keylane_replayed_total",                               \
    "Parked events resubmitted by replay.")                                    \
  X(active_lanes, Gauge, "keylane_active_lanes",                               \
    "Lanes alive now (one per key with work, lingering and retiring ones "     \
    "included); at most runtime.max_active_keys.")                             \
  X(peak_active_lanes, Gauge, "keylane_peak_active_lanes",                     \
    "Most lanes alive at once so far.")                                        \
  X(waiting_keys, Gauge, "keylane_waiting_keys",                               \
    "Keys with work waiting for a lane slot (the cap is reached).")            \
  X(lanes_spawned, Counter, "keylane_lane_spawns_total",                       \
    "Lanes started, one per key activation (a lane is an object inside a "     \
    "shard actor).")                                                           \
  X(lanes_retired, Counter, "keylane_lane_retires_total", "Lanes retired.")    \
  X(sink_buffered, Gauge, "keylane_sink_buffered",                             \
    "Results the sink holds back to restore order.")                           \
  X(peak_sink_buffered, Gauge, "keylane_peak_sink_buffered",                   \
    "Most results the sink held back at once so far.")                         \
  X(awaited_seq, Gauge, "keylane_awaited_seq",                                 \
    "The sequence number the sink waits for (global order only).")             \
  X(spilled, Counter, "keylane_spilled_total",                                 \
    "Results the sink wrote to its spill file (sink.spill_path).")             \
  X(spill_held, Gauge, "keylane_spill_held", "Results in the spill file now.") \
  X(spill_bytes, Gauge, "keylane_spill_bytes", "Bytes in the spill file now.") \
  X(peak_spill_held, Gauge, "", "")

namespace keylane::detail {

/// Counters the actors publish for `engine::snapshot`. Each has a single
/// writer (the actor that owns the number) and is read with relaxed loads:
/// each value is exact, but a snapshot is not taken at one instant.
struct counters {
#define KEYLANE_X(name, type, metric, help) std::atomic<uint64_t> name{0};
  KEYLANE_PUBLISHED_COUNTERS(KEYLANE_X)
#undef KEYLANE_X
  /// Nanoseconds since the epoch of `clock` when the sink began waiting
  /// for `awaited_seq`.
  std::atomic<int64_t> awaited_since_ns{0};
  latency_recorder latency;
};

} // namespace keylane::detail
