// SPDX-License-Identifier: Apache-2.0
#pragma once

// Runs one way once on one workload and measures it.

#include <cstdint>
#include <optional>
#include <string>

#include "latency_histogram.hpp"
#include "way.hpp"
#include "workload.hpp"

namespace keylane::bench {

/// How to run.
struct run_params {
  /// Rounds of `do_work` per event.
  uint64_t work_iters = 0;
  /// Closed loop only: threads submitting, each the events of the keys
  /// with `key % producers` equal to its number (a key's events stay in
  /// one thread, in order).
  int producers = 1;
  /// Events to submit (the workload's first `events`).
  size_t events = 0;
  /// Open-loop submission rate in events/s; 0 submits as fast as the way
  /// accepts (closed loop, for throughput).
  double rate = 0;
  /// Wait for lanes to retire and read the idle RSS afterwards.
  bool measure_idle = false;
  /// Pause after the lanes retired, before reading the idle RSS (lets
  /// allocators hand freed pages back, as in a real idle period).
  int idle_pause_ms = 100;
  /// Longest wait for all deliveries before the run counts as incomplete.
  double timeout_s = 120;
};

/// What one run measured.
struct sample {
  bool completed = false;
  /// Anything odd (start failure, refused submits, lanes not retiring).
  std::string note;
  uint64_t events = 0;
  uint64_t delivered = 0;
  uint64_t violations = 0;
  uint64_t failures = 0;
  /// From the first submit until the last delivery was seen.
  double seconds = 0;
  /// Process CPU seconds over the same span.
  double cpu_s = 0;
  /// Context switches of the process over the same span.
  uint64_t context_switches = 0;
  /// Open loop: from scheduled time to delivery, and from scheduled time
  /// to the start of `submit` (the pacer's own lateness).
  common::latency_histogram latency;
  common::latency_histogram pacer_lag;
  double base_rss_mb = 0;
  double peak_rss_mb = 0;
  double idle_rss_mb = 0;
  bool settled = true;
  /// Per-key actors the way started (keylane lanes), 0 if it has none.
  uint64_t lanes_spawned = 0;
  /// Threads the process had after the last delivery (producer threads
  /// joined) above those it had before the way was made: the way's
  /// workers and helper threads.
  int way_threads = 0;
  /// Submits turned away (overflow = reject) and retried (`way::rejected_submits`).
  uint64_t rejected_submits = 0;
  /// Share of the machine busy with other work meanwhile (0..1).
  double other_load = 0;
  /// Stateful ways: the keyed-state figures at the end of the measured
  /// span (writes after it, on retire and at stop, are not in them).
  std::optional<state_figures> state;
};

/// Runs `spec` once. Aborts the process if the way hangs well past
/// `p.timeout_s` (so a CTest run cannot hang forever).
[[nodiscard]] sample run_once(const way_spec& spec, const workload& w,
                              const run_params& p);

} // namespace keylane::bench
