// SPDX-License-Identifier: Apache-2.0
#include "options.hpp"

#include <cstdlib>
#include <iostream>

#include "command_line.hpp"

namespace ordered_export {

namespace {

constexpr const char* usage = R"(usage: ordered_export [--json] [--quick] [--items N] [--seed N]
                      [--config PATH] [--set SECTION.KEY=VALUE]... [--serve]
                      [--print-config]

Exports 1,000 rows, 8 in flight (runtime.max_active_keys = 8). Each row is
an asynchronous call finished from a lane timer: 10 ms, except exactly 1 %
of the rows (chosen by --seed, the same rows in every mode) that take
500 ms. The export runs once per mode, each in a fresh runtime:

  unordered                   order "none", window "unbounded"
  global_unbounded            order "global", window "unbounded"
  global_window_64            order "global", window 64
  per_key                     order "per_key", window "unbounded"; the key
                              is the row's customer (row % 100), so a
                              customer's rows run one at a time
  global_auto                 order "global", window "auto", window_max 512
  global_window_64_spill      order "global", window 64, sink.spill_path a
                              temporary directory (made under /tmp, removed
                              at exit)
  global_window_64_timeout    order "global", window 64,
                              retry.attempt_timeout_ms 100, max_attempts 1,
                              park.store "none": a straggler ends as a
                              failed tombstone instead of holding the output

Every mode also sets sink.spill_path ("" where it does not spill); all
modes but per_key key each row by itself ("row-N"). For each mode it prints
the total time (first submit to last output), the time to the first
result, the most results held in memory (stats.peak_sink_buffered), the
results spilled, the worker idle share (1 - handler busy time / (8 x total
time), a timed-out call counting until its timeout), the tombstones, and
the outputs out of the mode's order (global: sequence numbers ascending;
per key: each customer's rows ascending), which must be 0. Every row must
come out exactly once.

  --json           print one JSON object per mode, one per line, with
                   mode, total_s, first_result_s, peak_buffered, spilled,
                   idle_share, tombstones, violations
  --quick          400 rows of 2 ms, stragglers 100 ms, timeout 20 ms (for
                   the smoke test); --items still applies
  --items N        rows to export (default 1000)
  --seed N         seed of the stragglers and amounts (default 7)
  --config PATH    base settings of every mode (TOML, see
                   ordered_export.toml); default: max_active_keys = 8,
                   scheduler "sharing" on 2 threads
  --set S.K=V      override one base setting after --config, validated like
                   the file; repeatable, a later one wins. Each mode's own
                   keys (above) are applied after these and win.
  --print-config   print the effective base settings (defaults, --config,
                   --set) as TOML and exit 0
  --serve          after the report, keep the last mode's runtime up (idle,
                   with the [metrics] endpoint if metrics.listen is set)
                   until SIGINT or SIGTERM, then exit with the run's status;
                   SIGHUP reloads --config (with --set and the mode's keys
                   on top) into it
  --help           print this text

Progress: when stderr is a terminal and --json is not given, a line on
stderr counts the results of all modes; piped or with --json, nothing.

Exit status: 0 when every mode delivered every row exactly once and in
its order, 1 when not (or a runtime failed), 2 for bad arguments, a bad
config file or a bad --set.
)";

} // namespace

options parse_args(int argc, char** argv) {
  options opts;
  keylane::cli::command_line cl{"ordered_export", usage};
  cl.flag("--json", opts.json);
  cl.flag("--quick", opts.quick);
  cl.flag("--serve", opts.serve);
  cl.count("--items", opts.items, 1);
  cl.count("--seed", opts.seed, 0);
  cl.settings(opts.settings.config, opts.settings.overrides,
              opts.print_config);
  cl.parse(argc, argv);
  return opts;
}

} // namespace ordered_export
