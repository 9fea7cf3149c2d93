// SPDX-License-Identifier: Apache-2.0
// keylane_bench: keylane against its baselines, in one process on the same
// workloads. Prints a table (or --json), writes results and plots to a
// folder, and exits non-zero if an ordered way broke per-key order or a
// run did not complete. See bench/README.md.

#include <cstdio>
#include <fstream>
#include <iostream>
#include <sstream>

#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <progress.hpp>

#include "allocator.hpp"
#include "args.hpp"
#include "measure.hpp"
#include "plot.hpp"
#include "report.hpp"
#include "suite.hpp"

using namespace keylane::bench;

namespace {

std::string self_dir() {
  char buf[4096];
  auto n = readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n <= 0)
    return ".";
  std::string path(buf, static_cast<size_t>(n));
  auto slash = path.rfind('/');
  return slash == std::string::npos ? "." : path.substr(0, slash);
}

std::string join(const std::vector<std::string>& xs) {
  std::string out;
  for (auto& x : xs)
    out += (out.empty() ? "" : ",") + x;
  return out;
}

// Runs the keylane ways again in keylane_bench_sysalloc (built from the
// same sources without mimalloc) and reads its rows back.
std::vector<row> run_sysalloc_child(const options& o, std::string& note) {
  // The allocator's effect on the default scheduler only (the first of
  // --schedulers), to keep a full run short; --quick keeps just enough to
  // smoke-test this path: keylane_global, no handler work.
  std::vector<std::string> ways;
  for (auto& w : o.ways)
    if (w.rfind("keylane_", 0) == 0 && (!o.quick || w == "keylane_global"))
      ways.push_back(w);
  if (ways.empty())
    return {};
  auto exe = self_dir() + "/keylane_bench_sysalloc";
  if (access(exe.c_str(), X_OK) != 0) {
    note = "system-allocator rows skipped: " + exe + " not built";
    return {};
  }
  auto out_file = o.results + "/sysalloc_rows.txt";
  std::vector<std::string> threads;
  for (int n : o.threads)
    threads.push_back(std::to_string(n));
  std::string works;
  for (auto w : o.work_ns)
    if (!o.quick || works.empty())
      works += (works.empty() ? "" : ",") + std::to_string(w);
  std::vector<std::string> args{exe, "--child-out", out_file, "--runs",
                                std::to_string(o.runs), "--producers",
                                std::to_string(o.producers), "--events",
                                std::to_string(o.events), "--ways", join(ways),
                                "--workloads", join(o.workloads), "--work",
                                works, "--threads", join(threads),
                                "--schedulers", o.schedulers.front(),
                                "--rate", std::to_string(o.rate),
                                "--latency-seconds",
                                std::to_string(o.latency_seconds)};
  for (auto& s : o.sets) {
    args.push_back("--set");
    args.push_back(s);
  }
  if (o.quick)
    args.push_back("--quick");
  if (o.json)
    args.push_back("--json"); // no progress line from the child either
  std::vector<char*> argv;
  for (auto& a : args)
    argv.push_back(a.data());
  argv.push_back(nullptr);
  std::cerr << "-- keylane ways again with the system allocator (child "
               "process)\n";
  pid_t pid = fork();
  if (pid == 0) {
    dup2(STDERR_FILENO, STDOUT_FILENO); // keep our stdout for the report
    execv(exe.c_str(), argv.data());
    _exit(127);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  std::vector<row> rows;
  std::ifstream in{out_file};
  std::string line;
  while (std::getline(in, line)) {
    row r;
    if (from_record(line, r))
      rows.push_back(std::move(r));
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) > 1)
    note = "system-allocator child exited abnormally (status "
           + std::to_string(status) + ")";
  return rows;
}

// One finished row for the progress output; with the thread count in a
// sweep (`by_threads`).
std::string row_line(const row& r, bool by_threads) {
  char buf[256];
  auto threads = by_threads ? " threads " + std::to_string(r.threads) : "";
  std::snprintf(buf, sizeof buf,
                "   %-20s %-9s %-8s %-12s work %-4llu%s %10.0f ev/s  p99 %8.1f us"
                "  viol %llu%s\n",
                r.way.c_str(), r.scheduler.c_str(), r.allocator.c_str(),
                r.workload.c_str(), static_cast<unsigned long long>(r.work_ns),
                threads.c_str(),
                r.events_per_s.median, r.p99_us.median,
                static_cast<unsigned long long>(r.violations),
                r.completed ? "" : "  INCOMPLETE");
  return buf;
}

} // namespace

int main(int argc, char** argv) {
  std::string error;
  auto parsed = parse_args(argc, argv, error);
  if (!parsed) {
    std::cerr << "keylane_bench: " << error << "\n\n" << usage(argv[0]);
    return 2;
  }
  auto& o = *parsed;
  if (o.help) {
    std::cout << usage(argv[0]);
    return 0;
  }
  if (o.print_config) {
    std::cout << keylane_settings_toml(o.threads.front(), o.sets);
    return 0;
  }
  bool child = !o.child_out.empty();
  if (!child)
    ::mkdir(o.results.c_str(), 0755);

  run_info info;
  info.machine = machine_description();
  info.allocator_note = allocator_note();
  info.peak_rss_note = peak_reset_works()
                         ? "per run: VmHWM reset through /proc/self/clear_refs "
                           "before each run (checked to work)"
                         : "VmHWM could NOT be reset here: peak figures are "
                           "process-wide maxima so far, not per run";
  info.load_before = load_average();
  info.runs = o.runs;
  info.events = o.events;
  info.latency_seconds = o.latency_seconds;
  info.rate = o.rate;
  info.work_iters_1us = work_iters_for(1000);
  if (!child) {
    info.caf_note = caf_default_description();
    std::cerr << "keylane_bench on " << info.machine << "\n"
              << "load average " << info.load_before << "; " << o.runs
              << " run(s) per figure; 1 us of work = " << info.work_iters_1us
              << " rounds\n";
  }

  suite_options so;
  info.keylane_note = keylane_settings_note(o.threads, o.sets);
  info.threads = o.threads;
  bool by_threads = o.threads.size() > 1;
  so.ways = make_way_specs(o.ways, o.schedulers, o.threads, o.sets);
  so.workloads = o.workloads;
  so.work_ns = o.work_ns;
  so.runs = o.runs;
  so.producers = o.producers;
  so.events = o.events;
  so.rate = o.rate;
  so.latency_seconds = o.latency_seconds;
  so.idle_pause_ms = o.quick ? 10 : 100;
  so.allocator = allocator_name();
  auto t0 = now_ns();
  // On a terminal: runs done of all planned, redrawn a few times a second
  // by a thread that only reads a counter the suite bumps between runs.
  keylane::cli::progress shown{child ? "keylane_bench (system allocator)"
                                     : "keylane_bench",
                               planned_runs(so), "runs",
                               keylane::cli::progress_wanted(o.json)};
  so.on_run = [&shown] { shown.add(); };
  auto rows = run_suite(so, [&shown, by_threads](const row& r) {
    shown.say(row_line(r, by_threads));
  });
  shown.finish();

  if (child) {
    std::ofstream out{o.child_out};
    for (auto& r : rows)
      out << to_record(r) << "\n";
  } else if (o.sysalloc) {
    std::string note;
    auto more = run_sysalloc_child(o, note);
    if (!note.empty())
      info.allocator_note += "; " + note;
    rows.insert(rows.end(), more.begin(), more.end());
  }
  info.seconds = static_cast<double>(now_ns() - t0) * 1e-9;
  for (auto& r : rows)
    if (r.way.rfind("keylane_", 0) == 0)
      for (auto& s : o.sets)
        r.keylane_set += (r.keylane_set.empty() ? "--set " : " --set ") + s;

  int status = 0;
  for (auto& r : rows) {
    info.other_load_max_pct = std::max(info.other_load_max_pct,
                                        r.other_load_pct.max);
    if (!r.completed || (r.ordered && r.violations != 0))
      status = 1;
  }
  if (child)
    return status;

  std::ostringstream table;
  print_table(table, info, rows);
  char buf[128];
  std::snprintf(buf, sizeof buf, "wall time: %.0f s\n", info.seconds);
  table << buf;
  std::ostringstream json;
  print_json(json, rows);
  std::ofstream{o.results + "/table.txt"} << table.str();
  std::ofstream{o.results + "/results.json"} << json.str();
  {
    std::ofstream md{o.results + "/table.md"};
    print_markdown(md, info, rows);
  }
  if (o.json) {
    std::cout << json.str();
    std::cerr << table.str();
  } else {
    std::cout << table.str();
  }
  if (o.plots)
    std::cerr << draw_plots(rows, o.results, by_threads) << "\n";
  if (status != 0)
    std::cerr << "keylane_bench: FAILED: an ordered way broke per-key order "
                 "or a run did not complete (see the table)\n";
  return status;
}
