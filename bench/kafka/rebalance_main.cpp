// SPDX-License-Identifier: Apache-2.0
// keylane_kafka_rebalance_bench: what a rebalance costs in latency. Records
// go to a topic on librdkafka's mock cluster (in this process) at a steady
// rate; member A of a consumer group reads them alone, member B joins the
// group, then leaves it. Each record's latency (produced to its output at
// the member) is sorted by the window it was produced in, and the table
// gives p50 / p99 / max per window and per way of keeping state. Exits 1
// when a record was never answered. See bench/kafka/README.md.

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include <unistd.h>

#include "../measure.hpp"
#include "../report.hpp"
#include "command_line.hpp"
#include "keylane/errc.hpp"
#include "keylane/kafka/mock_cluster.hpp"
#include "rebalance_run.hpp"

using namespace keylane::bench;
using namespace keylane::bench::kafka;

namespace {

struct options {
  bool help = false, json = false, quick = false;
  int runs = 3;
  size_t rate = 2000;
  double phase_s = 6;
  int partitions = 12;
  size_t keys = 1000;
  std::vector<std::string> states;
  /// "eager" (librdkafka's default strategies) or "cooperative".
  std::string assignment = "eager";
};

std::string usage(const char* argv0) {
  std::ostringstream out;
  out << "usage: " << argv0 << " [options]\n"
      << "What a rebalance costs in latency: records at a steady rate, "
         "member A of a\ngroup alone, then member B joins, then B leaves; "
         "p50 / p99 / max latency\n(produced to answered) of the records "
         "produced in each window.\n\n"
      << "  --quick            smoke run: 1 run, 500 records/s, 3 s "
         "phases (CTest runs it)\n"
      << "  --json             one JSON object per row on stdout (table on "
         "stderr)\n"
      << "  --runs N           runs per state (default 3)\n"
      << "  --rate N           records per second (default 2000)\n"
      << "  --phase-seconds S  length of each phase (default 6; at least 3: "
         "a join\n                     takes about 2 s on the mock)\n"
      << "  --partitions N     partitions (default 12)\n"
      << "  --keys N           keys (default 1000)\n"
      << "  --states a,b       where state is kept (default all): none "
         "local changelog\n"
      << "  --assignment A     eager (librdkafka's default: every partition "
         "is revoked)\n                     or cooperative "
         "(cooperative-sticky: only moved ones are)\n"
      << "  --help             this text\n\n"
      << "Exit status: 0 ok, 1 a record was never answered or a run failed, "
         "2 bad arguments.\n";
  return out.str();
}

double percentile(std::vector<double> xs, double q) {
  if (xs.empty())
    return 0;
  std::sort(xs.begin(), xs.end());
  auto at = static_cast<size_t>(q * static_cast<double>(xs.size() - 1) + 0.5);
  return xs[std::min(at, xs.size() - 1)];
}

/// One state way and window over all runs: per run, p50, p99, max.
struct cell {
  std::string state, window;
  std::vector<double> p50, p99, max;
  size_t records = 0;
};

std::string ms(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", s * 1e3);
  return buf;
}

} // namespace

int main(int argc, char** argv) {
  options o;
  std::string states;
  CLI::App app{"keylane_kafka_rebalance_bench"};
  keylane::cli::read_as_before(app, o.help);
  app.add_flag("--quick", o.quick);
  app.add_flag("--json", o.json);
  auto runs = keylane::cli::add_whole(app, "--runs", o.runs, 1, 100);
  auto rate = keylane::cli::add_whole(app, "--rate", o.rate, 10, 1e6);
  auto phase = app.add_option("--phase-seconds", o.phase_s)
                 ->check(keylane::cli::number_check(3, 3600, false));
  keylane::cli::add_whole(app, "--partitions", o.partitions, 1, 1000);
  keylane::cli::add_whole(app, "--keys", o.keys, 1, 1e7);
  app.add_option("--states", states)
    ->check(keylane::cli::names_check({"none", "local", "changelog"},
                                      "states"));
  app.add_option("--assignment", o.assignment)
    ->check(CLI::IsMember({"eager", "cooperative"}));
  if (auto e = keylane::cli::parse_or_error(app, argc, argv)) {
    std::cerr << "keylane_kafka_rebalance_bench: " << *e << "\n\n"
              << usage(argv[0]);
    return 2;
  }
  if (o.help) {
    std::cout << usage(argv[0]);
    return 0;
  }
  if (o.quick) {
    if (runs->count() == 0)
      o.runs = 1;
    if (rate->count() == 0)
      o.rate = 500;
    if (phase->count() == 0)
      o.phase_s = 3;
  }
  o.states = keylane::cli::split_names(states);
  if (o.states.empty())
    o.states = {"none", "local", "changelog"};

  auto machine = machine_description();
  std::cerr << "keylane_kafka_rebalance_bench on " << machine
            << "\nload average " << load_average() << "; " << o.runs
            << " run(s) per state; " << o.rate << " records/s, "
            << o.phase_s << " s phases, " << o.partitions << " partitions, "
            << o.keys << " keys, " << o.assignment << " assignment\n";
  auto mc = keylane::kafka::mock_cluster::start(1);
  if (!mc) {
    std::cerr << "mock cluster: " << keylane::render(mc.error()) << "\n";
    return 1;
  }
  auto dir = std::filesystem::temp_directory_path()
             / ("keylane-rebalance-bench-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);

  std::vector<cell> cells;
  auto cell_of = [&](const std::string& st, const std::string& w) -> cell& {
    for (auto& c : cells)
      if (c.state == st && c.window == w)
        return c;
    cells.push_back({st, w, {}, {}, {}, 0});
    return cells.back();
  };
  std::vector<double> joins;
  uint64_t missing = 0, duplicates = 0;
  int status = 0;
  int serial = 0;
  // Runs alternate between states, so a slow spell of the machine spreads
  // over all of them.
  for (int run = 0; run < o.runs; ++run)
    for (auto& st : o.states) {
      rebalance_setup s;
      s.bootstrap = (*mc)->bootstrap_servers();
      ++serial;
      s.topic = "rebalance_" + std::to_string(serial);
      s.changelog = s.topic + "-state";
      s.group = "rebalance_group_" + std::to_string(serial);
      s.dir = dir.string();
      s.state = st == "none"    ? rebalance_state::none
                : st == "local" ? rebalance_state::local
                                : rebalance_state::changelog;
      s.partitions = o.partitions;
      s.keys = o.keys;
      s.rate = o.rate;
      s.phase_s = o.phase_s;
      if (o.assignment == "cooperative")
        s.assignment = "cooperative-sticky";
      caf::error err = (*mc)->create_topic(s.topic, o.partitions);
      if (!err && s.state == rebalance_state::changelog)
        err = (*mc)->create_topic(s.changelog, o.partitions);
      if (err) {
        std::cerr << "create topic: " << keylane::render(err) << "\n";
        return 1;
      }
      auto res = run_rebalance(s);
      if (!res.error.empty()) {
        std::cerr << "   run " << run + 1 << " " << st
                  << ": ERROR " << res.error << "\n";
        status = 1;
        continue;
      }
      auto lost = res.produced - res.answered;
      missing += lost;
      duplicates += res.duplicates;
      if (lost > 0)
        status = 1;
      if (res.join_to_first_s >= 0)
        joins.push_back(res.join_to_first_s);
      std::cerr << "   run " << run + 1 << " " << st << ":";
      for (auto& w : res.windows) {
        auto& c = cell_of(st, w.name);
        c.records += w.latencies.size();
        c.p50.push_back(percentile(w.latencies, 0.5));
        c.p99.push_back(percentile(w.latencies, 0.99));
        c.max.push_back(percentile(w.latencies, 1.0));
        std::cerr << "  " << w.name << " p99 " << ms(c.p99.back()) << " ms";
      }
      std::cerr << "  B's first answer " << ms(res.join_to_first_s)
                << " ms after its start; restores " << res.restores << " ("
                << res.restore_ms << " ms); unanswered " << lost
                << ", answered twice " << res.duplicates << "\n";
    }
  std::error_code ec;
  std::filesystem::remove_all(dir, ec);

  std::ostringstream table;
  char buf[256];
  table << "keylane_kafka_rebalance_bench - " << machine << "\n"
        << "mock cluster: 1 broker in this process; " << o.rate
        << " records/s over " << o.keys << " keys, " << o.partitions
        << " partitions, " << o.assignment << " assignment; phases of "
        << o.phase_s
        << " s: A alone (steady), B joins (join), B leaves (leave)\n"
        << "latency: produced to answered, ms; median over " << o.runs
        << " run(s), p99 min-max in brackets\n\n";
  std::snprintf(buf, sizeof buf, "%-10s %-7s %9s %9s %22s %9s\n", "state",
                "window", "records", "p50", "p99", "max");
  table << buf;
  for (auto& c : cells) {
    auto p99 = summarize(c.p99);
    std::snprintf(buf, sizeof buf, "%-10s %-7s %9zu %9s %9s [%s-%s] %9s\n",
                  c.state.c_str(), c.window.c_str(), c.records,
                  ms(summarize(c.p50).median).c_str(), ms(p99.median).c_str(),
                  ms(p99.min).c_str(), ms(p99.max).c_str(),
                  ms(summarize(c.max).median).c_str());
    table << buf;
  }
  auto j = summarize(joins);
  table << "\nB's first answer after its start: median " << ms(j.median)
        << " ms [" << ms(j.min) << "-" << ms(j.max) << "]; records never "
        << "answered " << missing << ", answered more than once "
        << duplicates << "\n";
  if (o.json) {
    for (auto& c : cells) {
      auto p50 = summarize(c.p50), p99 = summarize(c.p99),
           mx = summarize(c.max);
      std::cout << "{\"state\": \"" << c.state << "\", \"window\": \""
                << c.window << "\", \"records\": " << c.records
                << ", \"rate\": " << o.rate << ", \"phase_s\": " << o.phase_s
                << ", \"partitions\": " << o.partitions
                << ", \"keys\": " << o.keys
                << ", \"assignment\": \"" << o.assignment
                << "\", \"runs\": " << o.runs
                << ", \"p50_ms\": " << p50.median * 1e3
                << ", \"p99_ms\": " << p99.median * 1e3
                << ", \"p99_ms_min\": " << p99.min * 1e3
                << ", \"p99_ms_max\": " << p99.max * 1e3
                << ", \"max_ms\": " << mx.median * 1e3
                << ", \"machine\": \"" << machine << "\"}\n";
    }
    std::cerr << table.str();
  } else {
    std::cout << table.str();
  }
  if (status != 0)
    std::cerr << "keylane_kafka_rebalance_bench: FAILED: a run failed or a "
                 "record was never answered\n";
  return status;
}
