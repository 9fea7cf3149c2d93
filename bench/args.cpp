// SPDX-License-Identifier: Apache-2.0
#include "args.hpp"

#include <algorithm>
#include <cstdlib>
#include <sstream>

#include "command_line.hpp"
#include "way.hpp"
#include "workload.hpp"

namespace keylane::bench {

namespace {

using keylane::cli::add_whole;
using keylane::cli::names_check;
using keylane::cli::number_check;
using keylane::cli::split_names;

// --work: a list of whole nanoseconds, each checked.
CLI::Validator work_check() {
  return CLI::Validator{[](std::string& text) -> std::string {
                          auto parts = split_names(text);
                          if (parts.empty())
                            return "needs at least one value";
                          auto each = number_check(0, 1e7, true);
                          for (auto part : parts)
                            if (auto e = each(part); !e.empty())
                              return e + " (whole nanoseconds)";
                          return {};
                        },
                        "ns,ns"};
}

// --threads: a list of worker-thread counts, each checked.
CLI::Validator threads_check() {
  return CLI::Validator{[](std::string& text) -> std::string {
                          auto parts = split_names(text);
                          if (parts.empty())
                            return "needs at least one value";
                          auto each = number_check(1, 256, true);
                          for (auto part : parts)
                            if (auto e = each(part); !e.empty())
                              return e + " (worker threads per way)";
                          return {};
                        },
                        "N,N"};
}

// --workloads: the default ones and those run only when named.
std::vector<std::string> all_workload_names() {
  auto all = workload_names();
  for (const auto& w : on_request_workload_names())
    all.push_back(w);
  return all;
}

} // namespace

std::string usage(const char* argv0) {
  std::ostringstream out;
  out << "usage: " << argv0 << " [options]\n"
      << "Compares keylane with baselines on the same keyed workloads, in one "
         "process.\n\n"
      << "  --quick            small runs (smoke test; finishes in under a "
         "minute)\n"
      << "  --json             print one JSON object per row on stdout "
         "(table goes to stderr)\n"
      << "  --runs N           runs per figure (default 3; --quick: 1)\n"
      << "  --producers N      producer threads of the throughput runs, each\n"
         "                     submitting the events of its share of the keys\n"
         "                     (default 1; above 1 for keylane ways only)\n"
      << "  --ways a,b         ways to run (default all but the keyed-state "
         "ones):\n                    ";
  for (auto& w : default_way_names())
    out << " " << w;
  out << "\n                     on request: keylane_state (keylane_per_key "
         "with per-key state in\n"
         "                     RocksDB, a fresh temporary directory per run, "
         "checkpoint 100 ms),\n"
         "                     keylane_state_memory (the same in memory),\n"
         "                     ordered_partitions (hash_partitions with outputs "
         "in submission order),\n"
         "                     keyed_partitions (ordered_partitions with "
         "per-key counts and handler objects),\n"
         "                     keyed_slots (the same state at one fixed address per "
         "key, looked up once),\n"
         "                     caf_lanes (keylane's shape with no keylane code: CAF shard and\n"
         "                     sink actors, lane queues, heap events),\n"
         "                     caf_lanes_featured (caf_lanes plus what keylane_per_key\n"
         "                     pays per event: submit guard, window credit, atomic\n"
         "                     sequence, stamp, completion, tally, output thread; leave\n"
         "                     some out with KEYLANE_BENCH_FLOOR_WITHOUT=stamp,tally,...),\n"
         "                     keylane_tell (keylane_per_key with each event through a\n"
         "                     front key whose handler tells it on)";
  out << "\n  --workloads x,y    workloads to run (default these four):";
  for (auto& w : workload_names())
    out << " " << w;
  out << "\n                     on request:";
  for (auto& w : on_request_workload_names())
    out << " " << w;
  out << " (uniform over 16 and 2,048\n"
         "                     keys: every lane stays live, no activation on the path)";
  out << "\n  --events N         most events per throughput run (default 200000; "
         "--quick: 5000);\n"
         "                     a warm-up run sizes each way's runs to ~0.6 s "
         "within [N/10, N]\n"
      << "  --work ns,ns       handler work per event in ns (default 0,1000)\n"
      << "  --threads N,N      worker threads of every way that has them, "
         "each way run at each\n"
         "                     count (default 2): the partitions' and "
         "shared_queue's workers,\n"
         "                     asio_strand's io_context threads, CAF's workers "
         "(caf_naive,\n"
         "                     caf_lanes, whose shards follow it too) and "
         "keylane's\n"
         "                     scheduler.threads (its shards follow it unless "
         "--set\n"
         "                     scheduler.shards); single_loop ignores it and runs "
         "once, on\n"
         "                     the producer thread (its rows say threads 1)\n"
      << "  --rate R           open-loop rate in events/s (default 200000)\n"
      << "  --latency-seconds S  length of one open-loop run (default 1; "
         "--quick: 0.1)\n"
      << "  --schedulers s,s   CAF schedulers for keylane (default "
         "sharing,stealing)\n"
      << "  --set sec.key=val  override a keylane setting of the keylane ways, "
         "as in its\n"
         "                     config file (repeatable; docs/config.md), e.g. "
         "--set runtime.window=4096\n"
      << "  --print-config     print the keylane ways' settings (with --set) as "
         "TOML and exit\n"
         "                     (runtime.order and scheduler.policy are per "
         "way and row,\n"
         "                     scheduler.threads per row: shown for the first "
         "of --threads)\n"
      << "  --no-sysalloc      skip the keylane rows with the system allocator\n"
      << "  --results DIR      where results and plots go (default results)\n"
      << "  --no-plots         do not draw plots\n"
      << "  --help             this text\n\n"
      << "Progress: on a terminal (stderr) without --json, one line shows runs "
         "done of those\n"
         "planned, runs per second and the time elapsed, redrawn in place four "
         "times a second\n"
         "and cleared at the end (the count moves between runs, never inside a "
         "measured\n"
         "loop); piped or with --json there is none, and stderr lists only the "
         "finished rows.\n\n"
      << "Exit status: 0 ok, 1 an ordered way broke per-key order or a run did "
         "not complete, 2 bad arguments.\n";
  return out.str();
}

std::optional<options> parse_args(int argc, char** argv, std::string& error) {
  options o;
  CLI::App app{"keylane_bench"};
  // main prints the help text (it lists the ways and workloads).
  keylane::cli::read_as_before(app, o.help);
  std::string ways, workloads, schedulers, work, threads;
  bool no_plots = false, no_sysalloc = false;
  app.add_flag("--quick", o.quick);
  app.add_flag("--json", o.json);
  app.add_flag("--no-plots", no_plots);
  app.add_flag("--no-sysalloc", no_sysalloc);
  auto runs = add_whole(app, "--runs", o.runs, 1, 1000);
  add_whole(app, "--producers", o.producers, 1, 64);
  auto events = add_whole(app, "--events", o.events, 100, 1e8);
  app.add_option("--rate", o.rate)->check(number_check(1, 1e8, false));
  auto latency = app.add_option("--latency-seconds", o.latency_seconds)
                   ->check(number_check(0.001, 600, false));
  app.add_option("--work", work)->check(work_check());
  app.add_option("--threads", threads)->check(threads_check());
  app.add_option("--ways", ways)->check(names_check(way_names(), "ways"));
  app.add_option("--workloads", workloads)
    ->check(names_check(all_workload_names(), "workloads"));
  app.add_option("--schedulers", schedulers)
    ->check(names_check({"sharing", "stealing"}, "schedulers"));
  app.add_option("--results", o.results)
    ->check(keylane::cli::not_empty("needs a directory"));
  keylane::cli::add_repeated(app, "--set", o.sets);
  app.add_flag("--print-config", o.print_config);
  app.add_option("--child-out", o.child_out);
  if (auto e = keylane::cli::parse_or_error(app, argc, argv)) {
    error = *e;
    return std::nullopt;
  }
  o.plots = !no_plots;
  o.sysalloc = !no_sysalloc;
  o.ways = split_names(ways);
  o.workloads = split_names(workloads);
  if (!schedulers.empty())
    o.schedulers = split_names(schedulers);
  if (!work.empty()) {
    o.work_ns.clear();
    for (auto& part : split_names(work))
      o.work_ns.push_back(
        static_cast<uint64_t>(std::strtod(part.c_str(), nullptr)));
  }
  if (!threads.empty()) {
    o.threads.clear();
    for (auto& part : split_names(threads)) {
      auto n = static_cast<int>(std::strtod(part.c_str(), nullptr));
      // A count given twice would run the same rows twice.
      if (std::find(o.threads.begin(), o.threads.end(), n) == o.threads.end())
        o.threads.push_back(n);
    }
  }
  if (o.quick) {
    if (runs->count() == 0)
      o.runs = 1;
    if (events->count() == 0)
      o.events = 5000;
    if (latency->count() == 0)
      o.latency_seconds = 0.1;
  }
  if (error = check_keylane_overrides(o.sets); !error.empty())
    return std::nullopt;
  if (o.ways.empty())
    o.ways = default_way_names();
  if (o.producers > 1)
    for (auto& w : o.ways)
      if (w.rfind("keylane_", 0) != 0) {
        error = "--producers " + std::to_string(o.producers) + ": way " + w
                + " takes one producer thread; name keylane ways only "
                  "(--ways keylane_global,...)";
        return std::nullopt;
      }
  if (o.workloads.empty())
    o.workloads = workload_names();
  return o;
}

} // namespace keylane::bench
