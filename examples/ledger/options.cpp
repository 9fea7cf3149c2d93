// SPDX-License-Identifier: Apache-2.0
#include "options.hpp"

#include <cstdlib>
#include <iostream>
#include <string>

#include "command_line.hpp"

namespace ledger {

namespace {

constexpr const char* usage = R"(usage: ledger [--scenario hot|retry] [--json] [--seed N] [--config PATH]
              [--set SECTION.KEY=VALUE]... [--serve] [--print-config]

--scenario hot (the default): runs 400 account events over 40 accounts
(acct-0 hot with 200 of them), each costing a simulated 1-4 ms database
round trip, three ways: a shared queue with 8 workers, 8 hash partitions,
and keylane lanes. Prints, per way, the per-account order violations, the
rejected business events, when the cold accounts finished (median and
last), when the hot one finished, and the total time.

--scenario retry: runs 200 account events (40 accounts, 5 each, 1-4 ms
round trip) through keylane lanes that retry up to 4 attempts per event,
while the handler fails acct-5's second event twice (retryable) and
acct-9's first event for good. Checks that acct-5 completes in order after
2 retries, that acct-9's events are all parked in order (parked_events
lists them as submitted), that every other account is unaffected; then
clears acct-9's fault, replays it, drains and checks that its events
complete in order. --json prints one line that starts
{"order_kept": true, "parked": {"acct-9": 5}, "retried": {"acct-5": 2},
"replayed_in_order": true, ...

  --scenario NAME  hot or retry (default hot)
  --json           print only one JSON object, on one line
  --seed N         seed of the workload (default 42)
  --config PATH    keylane settings for the lanes (TOML, see ledger.toml and
                   retry.toml); default: max_active_keys = 8, window =
                   "unbounded", order = "per_key", scheduler "sharing" on 2
                   threads, and for retry the [retry] and [park] of
                   retry.toml
  --set S.K=V      override one setting after --config, validated like the
                   file (runtime.max_active_keys=4, retry.max_attempts=2);
                   repeatable, a later one wins
  --print-config   print the effective settings (defaults, --config, --set)
                   as TOML and exit 0
  --serve          after the scenario and its report, keep the keylane
                   runtime up (idle, with the [metrics] endpoint if
                   metrics.listen is set) until SIGINT or SIGTERM, then
                   stop it and exit with the scenario's status
  --help           print this text

Signals: SIGHUP (while serving, or while the lanes run) re-reads the
--config file, applies the same --set overrides on top (the command line
keeps winning) and reloads the running lanes. These change at once:
runtime.max_active_keys, runtime.window, every [retry] key (attempt
timeout included), log.level, log.stall_ms and metrics.latency; other
changed keys are reported as taking effect only at restart. A file that
does not validate is refused with the reason, and the running settings
stay. The outcome goes to stderr ("keylane info: reload from ledger.toml:
runtime.max_active_keys = 8 -> 4"; below log.level = "info" the ledger
prints those lines itself). Without --config there is no file to reload.
During the scenario SIGINT and SIGTERM end the program at once, as
usual; while serving they stop the runtime cleanly.

Progress: when stderr is a terminal and --json is not given, a line on
stderr shows events done/total, the rate and the time elapsed, rewritten
in place and cleared when the run ends; piped or with --json, nothing.

Exit status: 0 when the scenario went as expected (hot: the partitions and
the lanes kept every account's order and rejected nothing; retry: every
check above held), 1 when it did not (or the lanes failed), 2 for bad
arguments, a bad config file or a bad --set; with --serve, the same once
SIGINT or SIGTERM ended the serving.
)";

} // namespace

options parse_args(int argc, char** argv) {
  options opts;
  std::string which = "hot";
  keylane::cli::command_line cl{"ledger", usage};
  cl.flag("--json", opts.json);
  cl.flag("--serve", opts.serve);
  cl.text("--scenario", which);
  cl.count("--seed", opts.seed, 0);
  cl.settings(opts.settings.config, opts.settings.overrides,
              opts.print_config);
  cl.parse(argc, argv);
  if (which == "hot")
    opts.which = scenario::hot;
  else if (which == "retry")
    opts.which = scenario::retry;
  else
    cl.fail("--scenario must be hot or retry, got '" + which + "'");
  opts.settings.retry = opts.which == scenario::retry;
  return opts;
}

} // namespace ledger
