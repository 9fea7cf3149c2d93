// SPDX-License-Identifier: Apache-2.0
#pragma once

// Rows of the report: medians with spread, as a table, JSON, and the
// line format a child process hands rows back in.

#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

namespace keylane::bench {

/// Median of several runs with the smallest and largest value.
struct figure {
  double median = 0;
  double min = 0;
  double max = 0;
};

/// The median, min and max of `xs` (zeros when empty).
[[nodiscard]] figure summarize(std::vector<double> xs);

/// One way on one workload with one handler work, over all its runs.
struct row {
  std::string way;
  std::string workload;
  uint64_t work_ns = 0;
  std::string scheduler; // keylane rows only
  std::string allocator; // "mimalloc" or "system"
  int producers = 1;     // producer threads of the throughput runs
  bool ordered = true;
  int runs = 0;
  uint64_t events = 0; // per throughput run (sized by a warm-up run)
  figure events_per_s;
  figure cpu_ns_per_event;
  /// Context switches of the process per event (closed-loop runs): the
  /// wake-ups a design spends, which CPU time alone does not show.
  figure cs_per_event;
  /// The process's CPU seconds over wall seconds in the closed-loop runs:
  /// how many cores the way kept busy (producer included).
  figure cores_busy;
  double rate = 0; // open-loop rate of the p50/p99/p999 figures
  bool overloaded = false; // `rate` is above the way's measured maximum
  figure p50_us, p99_us, p999_us;
  figure pacer_p99_us; // the pacer's own lateness at `rate`
  figure pacer_p99_half_us; // ... and at `half_rate`
  double half_rate = 0;
  figure p50_half_us, p99_half_us, p999_half_us;
  figure peak_rss_mb, base_rss_mb, idle_rss_mb;
  figure lanes_per_event; // keylane: lanes spawned per event (throughput runs)
  uint64_t violations = 0; // over all runs of the row
  bool completed = true;   // every run delivered every event
  figure other_load_pct;
  std::string notes;
  /// keylane rows: the --set overrides of the run ("--set a=b --set c=d").
  std::string keylane_set;
  /// Submits turned away by `runtime.overflow = reject` and retried, over
  /// all runs of the row (0 with overflow = block).
  uint64_t rejected_submits = 0;
  /// Worker threads the way ran with (`--threads`; 1 for single_loop,
  /// which runs on the producer thread).
  int threads = 1;
  /// Threads the process had at the end of a run (after the last delivery,
  /// producer threads joined) above those it had before the way was made,
  /// the most of the row's runs: the way's workers and its helpers (CAF's
  /// clock and printer, keylane's output thread); 0 for single_loop.
  int way_threads = 0;

  // -- keyed state: the keylane_state ways only (absent from other rows'
  // JSON). Per throughput run, up to its last delivery (the writes on
  // retire and at stop after it are not counted).

  /// The state store ("rocksdb", "memory"); "" for a way without state.
  std::string state_store;
  /// Key states loaded (one per lane activation).
  figure state_loads;
  /// Load latency, us: the median and p99 as the upper bound of the
  /// `keylane::latency_histogram` bucket holding them (10, 25, 50, 100,
  /// ... us), and the exact mean.
  figure state_load_p50_us, state_load_p99_us, state_load_mean_us;
  /// Key states written, their bytes, and the batches they went in.
  figure state_writes, state_write_bytes, state_checkpoints;
  /// `state_writes` over the run's wall time (first submit to last
  /// delivery).
  figure state_writes_per_s;
  /// Loads and batch writes that failed, over all throughput runs.
  uint64_t state_failures = 0;
};

/// Facts about the whole run, printed above the table.
struct run_info {
  std::string machine;
  std::string allocator_note;
  std::string peak_rss_note;
  std::string caf_note;
  /// The keylane ways' settings, overrides included.
  std::string keylane_note;
  /// The worker-thread counts swept (`--threads`): with more than one, the
  /// tables say each row's count.
  std::vector<int> threads{2};
  double load_before = 0;
  int runs = 0;
  uint64_t events = 0;
  double latency_seconds = 0;
  double rate = 0;
  uint64_t work_iters_1us = 0;
  double other_load_max_pct = 0;
  double seconds = 0;
};

/// Prints the header and the table.
void print_table(std::ostream& out, const run_info& info,
                 const std::vector<row>& rows);

/// Prints the table as Markdown (for docs/performance.md).
void print_markdown(std::ostream& out, const run_info& info,
                    const std::vector<row>& rows);

/// Prints the rows as a JSON array, one object per row.
void print_json(std::ostream& out, const std::vector<row>& rows);

/// One row as one line of "name=value" fields separated by tabs.
[[nodiscard]] std::string to_record(const row& r);

/// Parses `to_record`'s line; false if it is not one.
[[nodiscard]] bool from_record(const std::string& line, row& r);

} // namespace keylane::bench
