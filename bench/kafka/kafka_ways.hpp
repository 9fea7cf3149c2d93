// SPDX-License-Identifier: Apache-2.0
#pragma once

// The ways the benchmark reads a workload's topic: a plain librdkafka
// consume loop, and keylane::kafka::source keyed three ways.

#include <cstddef>
#include <cstdint>
#include <string>

#include "kafka_feed.hpp"

namespace keylane::bench::kafka {

/// One run of one way.
struct run_result {
  /// From the first record reaching the handler (the consume loop: the
  /// first record read) to the last record finished, in seconds.
  double total_s = 0;
  /// Records whose n was not one more than their key's previous one, in
  /// finishing order (reordering, gaps, duplicates).
  uint64_t violations = 0;
  /// Records finished (the consume loop: read).
  uint64_t finished = 0;
  /// Every record finished in time.
  bool completed = false;
  /// Why the run could not start, or "".
  std::string error;
};

/// What the keylane source keys the records by.
enum class keyed_by {
  /// The header "part": one event at a time per partition.
  partition,
  /// The record key: keylane's per-key lanes.
  record_key,
  /// The header "id": every record its own key, no order at all.
  record_id,
};

/// Reads every partition of `w.topic` from the start with one librdkafka
/// consumer (assigned, no group) and does nothing else: the ceiling.
[[nodiscard]] run_result run_consume_loop(const std::string& bootstrap,
                                          const workload& w);

/// Runs `w.topic` through a keylane::kafka::source in a fresh group
/// (`group`): runtime.order = "none", 2 threads, `concurrency` lanes at
/// most; the handler finishes each record after its drawn delay through
/// `run_later`, without holding a thread.
[[nodiscard]] run_result run_keylane(const std::string& bootstrap,
                                     const workload& w, keyed_by by,
                                     size_t concurrency,
                                     const std::string& group);

/// How a stateful run keeps its per-key state (a count of the key's
/// records, changed when each record finishes).
enum class state_kept {
  /// In the lane only (`state.store = "none"`): at-least-once, the
  /// baseline.
  none,
  /// In the member's own RocksDB directory: exactly once per member.
  local,
  /// In RocksDB behind the changelog topic `changelog`: exactly once
  /// across members.
  changelog,
};

/// Like `run_keylane` keyed by record key, with a handler that keeps
/// per-key state as `kept` says, in a fresh directory under `dir`.
[[nodiscard]] run_result run_keylane_state(const std::string& bootstrap,
                                           const workload& w, state_kept kept,
                                           size_t concurrency,
                                           const std::string& group,
                                           const std::string& dir,
                                           const std::string& changelog);

} // namespace keylane::bench::kafka
