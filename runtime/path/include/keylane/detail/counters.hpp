// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <vector>

#include "keylane/detail/latency_recorder.hpp"

// The counters keylane's actors publish, listed once: this list makes the
// atomics below, `engine::snapshot`'s copy into `keylane::stats`, and the
// Prometheus families of the metrics endpoint. Columns: the `stats` field,
// the metric type, the metric name (empty: the endpoint builds that one by
// hand), its help text, and who keeps it: `pub`, an atomic below that one
// actor writes, or `table`, the key table's own count (read at snapshot). The names are a contract with users'
// dashboards (docs/metrics.md): add new ones, never rename or retype one.
#define KEYLANE_PUBLISHED_COUNTERS(X)                                          \
  X(ok, Counter, "", "", pub)                                                  \
  X(skipped, Counter, "", "", pub)                                             \
  X(failed, Counter, "", "", pub)                                              \
  X(parked, Counter, "", "", pub)                                              \
  X(retries, Counter, "keylane_retries_total",                                 \
    "Handler attempts beyond the first, over all events.", pub)                \
  X(replayed, Counter, "keylane_replayed_total",                               \
    "Parked events resubmitted by replay.", pub)                               \
  X(active_lanes, Gauge, "keylane_active_lanes",                               \
    "Lanes alive now (one per key with work, lingering and retiring ones "     \
    "included); at most runtime.max_active_keys.", table)                      \
  X(peak_active_lanes, Gauge, "keylane_peak_active_lanes",                     \
    "Most lanes alive at once so far.", table)                                 \
  X(waiting_keys, Gauge, "keylane_waiting_keys",                               \
    "Keys with work waiting for a lane slot (the cap is reached).", table)     \
  X(lanes_spawned, Counter, "keylane_lane_spawns_total",                       \
    "Lanes started, one per key activation (a lane is an object inside a "     \
    "shard actor).", pub)                                                      \
  X(lanes_retired, Counter, "keylane_lane_retires_total", "Lanes retired.", pub) \
  X(lanes_moved, Counter, "keylane_lane_moves_total",                          \
    "Idle lanes a busy shard handed to a less busy one.", pub)                 \
  X(sink_buffered, Gauge, "keylane_sink_buffered",                             \
    "Results the sink holds back to restore order.", pub)                      \
  X(peak_sink_buffered, Gauge, "keylane_peak_sink_buffered",                   \
    "Most results the sink held back at once so far.", pub)                    \
  X(awaited_seq, Gauge, "keylane_awaited_seq",                                 \
    "The sequence number the sink waits for (global order only).", pub)        \
  X(spilled, Counter, "keylane_spilled_total",                                 \
    "Results the sink wrote to its spill file (sink.spill_path).", pub)        \
  X(spill_held, Gauge, "keylane_spill_held", "Results in the spill file now.", pub) \
  X(spill_bytes, Gauge, "keylane_spill_bytes", "Bytes in the spill file now.", pub) \
  X(spill_write_failures, Counter, "keylane_spill_write_failures_total",       \
    "Spill writes the disk refused (each result stays in memory).", pub)      \
  X(peak_spill_held, Gauge, "", "", pub)

namespace keylane::detail {

/// The outcome counts and latency of the events one actor hands to the
/// output itself (`order` per_key or none): a shard's, or the
/// supervisor's. Only that actor writes it, one batch at a time, outside
/// the output's lock: when every shard counted into one block under that
/// lock, its lines moved between the shards' cores with every batch.
/// `engine::snapshot` adds the blocks up. Relaxed loads and stores.
struct alignas(64) outcome_tally {
  std::atomic<uint64_t> ok{0};
  std::atomic<uint64_t> skipped{0};
  std::atomic<uint64_t> failed{0};
  std::atomic<uint64_t> parked{0};
  std::atomic<uint64_t> retries{0};
  latency_recorder latency;
};

/// Counters the actors publish for `engine::snapshot`. Each has a single
/// writer (the actor that owns the number) and is read with relaxed loads:
/// each value is exact, but a snapshot is not taken at one instant.
struct counters {
#define KEYLANE_ATOMIC_pub(name) std::atomic<uint64_t> name{0};
#define KEYLANE_ATOMIC_table(name)
#define KEYLANE_X(name, type, metric, help, src) KEYLANE_ATOMIC_##src(name)
  KEYLANE_PUBLISHED_COUNTERS(KEYLANE_X)
#undef KEYLANE_X
#undef KEYLANE_ATOMIC_table
#undef KEYLANE_ATOMIC_pub
  /// Nanoseconds since the epoch of `clock` when the sink began waiting
  /// for `awaited_seq`.
  std::atomic<int64_t> awaited_since_ns{0};
  latency_recorder latency;
  /// One block per shard, then the supervisor's (sized before any actor
  /// starts): what they emit without the sink is counted there, and the
  /// counters above hold the sink's.
  std::vector<std::unique_ptr<outcome_tally>> tallies;
};

} // namespace keylane::detail
