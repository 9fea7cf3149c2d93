// SPDX-License-Identifier: Apache-2.0
#include "plot.hpp"

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <map>

#include <sys/stat.h>

namespace keylane::bench {

namespace {

bool exists(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0;
}

std::string script_path() {
#ifdef KEYLANE_BENCH_PLOT_SCRIPT
  if (exists(KEYLANE_BENCH_PLOT_SCRIPT))
    return KEYLANE_BENCH_PLOT_SCRIPT;
#endif
  return {};
}

// Single quotes for the shell.
std::string sh(const std::string& s) {
  std::string out = "'";
  for (char c : s)
    out += c == '\'' ? std::string{"'\\''"} : std::string(1, c);
  return out + "'";
}

// A column name, so without spaces: "asio_strand", "keylane_global/sharing",
// with the thread count in a sweep ("asio_strand/t4").
std::string series_of(const row& r, bool by_threads) {
  auto s = r.scheduler.empty() ? r.way : r.way + "/" + r.scheduler;
  return by_threads ? s + "/t" + std::to_string(r.threads) : s;
}

// One table per work value: a line per workload, a column per series.
// Missing values are "?" (gnuplot's missing-data marker, set in plot.gp).
void write_table(const std::vector<row>& rows, uint64_t work, bool by_threads,
                 const std::vector<std::string>& series,
                 const std::vector<std::string>& workloads,
                 double (*value)(const row&), const std::string& path) {
  std::ofstream out{path};
  out << "workload";
  for (auto& s : series)
    out << " " << s;
  out << "\n";
  for (auto& wl : workloads) {
    out << wl;
    for (auto& s : series) {
      auto it = std::find_if(rows.begin(), rows.end(), [&](const row& r) {
        return r.work_ns == work && r.workload == wl
               && series_of(r, by_threads) == s
               && r.allocator != "system";
      });
      double v = it == rows.end() ? 0 : value(*it);
      if (v > 0)
        out << " " << v;
      else
        out << " ?";
    }
    out << "\n";
  }
}

} // namespace

std::string draw_plots(const std::vector<row>& rows, const std::string& dir,
                       bool by_threads) {
  if (rows.empty())
    return "plots: no rows";
  if (std::system("command -v gnuplot >/dev/null 2>&1") != 0)
    return "plots skipped: gnuplot not found (apt-get install gnuplot-nox)";
  auto script = script_path();
  if (script.empty())
    return "plots skipped: plot.gp not found";
  std::vector<std::string> series, workloads;
  std::vector<uint64_t> works;
  for (auto& r : rows) {
    if (r.allocator == "system")
      continue;
    auto name = series_of(r, by_threads);
    if (std::find(series.begin(), series.end(), name) == series.end())
      series.push_back(name);
    if (std::find(workloads.begin(), workloads.end(), r.workload) == workloads.end())
      workloads.push_back(r.workload);
    if (std::find(works.begin(), works.end(), r.work_ns) == works.end())
      works.push_back(r.work_ns);
  }
  std::string work_list;
  for (auto w : works) {
    auto tag = std::to_string(w);
    write_table(rows, w, by_threads, series, workloads,
                [](const row& r) { return r.events_per_s.median; },
                dir + "/throughput_" + tag + ".dat");
    write_table(rows, w, by_threads, series, workloads,
                [](const row& r) { return r.p50_us.median; },
                dir + "/p50_" + tag + ".dat");
    write_table(rows, w, by_threads, series, workloads,
                [](const row& r) { return r.p99_us.median; },
                dir + "/p99_" + tag + ".dat");
    work_list += (work_list.empty() ? "" : " ") + tag;
  }
  std::string rate = std::to_string(static_cast<long>(rows.front().rate));
  std::string cmd = "gnuplot -e " + sh("dir='" + dir + "'; works='" + work_list
                                       + "'; nseries="
                                       + std::to_string(series.size())
                                       + "; rate='" + rate + "'")
                    + " " + sh(script) + " 2>" + sh(dir + "/gnuplot.log");
  if (std::system(cmd.c_str()) != 0)
    return "plots failed: see " + dir + "/gnuplot.log";
  return "plots: " + dir + "/perf_throughput.svg, " + dir + "/perf_latency.svg";
}

} // namespace keylane::bench
