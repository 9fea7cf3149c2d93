// SPDX-License-Identifier: Apache-2.0
#pragma once

// The measurement plan: every way on every workload, interleaved runs.

#include <functional>
#include <string>
#include <vector>

#include "report.hpp"
#include "way.hpp"

namespace keylane::bench {

/// What to run.
struct suite_options {
  std::vector<way_spec> ways;
  std::vector<std::string> workloads;
  /// Handler work per event, ns (0 and 1000 by default).
  std::vector<uint64_t> work_ns;
  int runs = 3;
  /// Producer threads of the throughput runs.
  int producers = 1;
  /// Most events per throughput run.
  size_t events = 200000;
  /// Throughput runs are sized from a short warm-up run to take about this
  /// long (between events / 10 and events), so slow ways do not stretch
  /// the whole benchmark.
  double target_seconds = 0.6;
  /// Pause after a run's lanes retired, before reading the idle RSS.
  int idle_pause_ms = 100;
  /// Open-loop rate of the headline latency figures, events/s.
  double rate = 200000;
  /// Length of one open-loop run.
  double latency_seconds = 1.0;
  /// Allocator this binary runs with, for the rows.
  std::string allocator;
  /// Called after each run (warm-up ones included), outside its measured
  /// span: for the progress line.
  std::function<void()> on_run;
};

/// How many runs `run_suite(opt, ...)` makes, warm-ups included.
[[nodiscard]] uint64_t planned_runs(const suite_options& opt);

/// Runs the plan; calls `on_row` as each row is complete (for progress).
[[nodiscard]] std::vector<row>
run_suite(const suite_options& opt, const std::function<void(const row&)>& on_row);

/// Rounds of `do_work` for `ns` nanoseconds (calibrated once, cached).
[[nodiscard]] uint64_t work_iters_for(uint64_t ns);

} // namespace keylane::bench
