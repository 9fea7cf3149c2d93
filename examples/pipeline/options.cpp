// SPDX-License-Identifier: Apache-2.0
#include "options.hpp"

#include <cstdlib>
#include <iostream>

#include "command_line.hpp"

namespace pipeline_example {

namespace {

constexpr const char* usage = R"(usage: pipeline [--json] [--quick] [--items N] [--seed N]
                [--config PATH] [--set SECTION.KEY=VALUE]... [--print-config]

Runs 1,000 items for 100 accounts through two stages in sequence, each
with 8 in flight (runtime.max_active_keys = 8), and delivers them in
submission order (runtime.order "global"). Stage 1 ("fetch", unordered)
takes 10 ms per item, except exactly 1 % (chosen by --seed) that take
200 ms; stage 2 takes 10 ms ("convert", unordered) or keeps a running
total per account ("total"). Each mode runs in a fresh pipeline:

  sink_only             convert, unordered; results re-sequenced once,
                        at the sink
  each_stage            convert, unordered behind a global
                        re-sequencer: results re-sequenced after stage 1
                        and again at the sink
  stateful              total, ordered: a per-account re-sequencer in
                        front, so each account's items reach it in
                        submission order; its totals must equal a
                        sequential run's
  stateful_unsequenced  total, keyed, without a re-sequencer: each
                        account's items reach it in stage 1's completion
                        order, so totals differ from the sequential run
                        (shown, not an error)

For each mode it prints the total time (first submit to last output), the
time to the first result, the most items held by the re-sequencer after
stage 1 and at the sink, tombstones, outputs out of order, missing or
repeated (violations, must be 0), and results that differ from the
sequential reference (mismatches, must be 0 except in
stateful_unsequenced).

  --json           one JSON object per mode, one per line, with mode,
                   total_s, first_result_s, peak_buffered (at the sink),
                   stage_peaks (per stage), tombstones, violations,
                   mismatches
  --quick          300 items of 2 ms, stragglers 40 ms (the smoke test);
                   --items still applies
  --items N        items (default 1000)
  --seed N         seed of the stragglers, accounts and amounts (default 7)
  --config PATH    settings of every stage (TOML, see pipeline.toml);
                   default: max_active_keys = 8, scheduler "sharing" on 2
                   threads. runtime.order is set by the program.
  --set S.K=V      override one setting after --config, validated like the
                   file; repeatable, a later one wins
  --print-config   print the effective settings (defaults, --config, --set,
                   the program's runtime.order) as TOML and exit 0
  --help           print this text

Exit status: 0 when every mode delivered every item exactly once and in
order and "stateful" matched the sequential run, 1 when not, 2 for bad
arguments, a bad config file or a bad --set.
)";

} // namespace

options parse_args(int argc, char** argv) {
  options opts;
  keylane::cli::command_line cl{"pipeline", usage};
  cl.flag("--json", opts.json);
  cl.flag("--quick", opts.quick);
  cl.count("--items", opts.items, 1);
  cl.count("--seed", opts.seed, 0);
  cl.settings(opts.config, opts.overrides, opts.print_config);
  cl.parse(argc, argv);
  return opts;
}

} // namespace pipeline_example
