// SPDX-License-Identifier: Apache-2.0
#include "args.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <sstream>

#include "way.hpp"
#include "workload.hpp"

namespace keylane::bench {

namespace {

std::vector<std::string> split(const std::string& s) {
  std::vector<std::string> out;
  std::istringstream in{s};
  std::string part;
  while (std::getline(in, part, ','))
    if (!part.empty())
      out.push_back(part);
  return out;
}

bool check_names(const std::vector<std::string>& given,
                 const std::vector<std::string>& known, const char* what,
                 std::string& error) {
  if (given.empty()) {
    error = std::string{"--"} + what + " needs at least one name";
    return false;
  }
  for (auto& g : given)
    if (std::find(known.begin(), known.end(), g) == known.end()) {
      error = "unknown " + std::string{what} + " '" + g + "'; known:";
      for (auto& k : known)
        error += " " + k;
      return false;
    }
  return true;
}

bool to_number(const std::string& s, double lo, double hi, double& out) {
  if (s.empty())
    return false;
  errno = 0;
  char* end = nullptr;
  out = std::strtod(s.c_str(), &end);
  return errno == 0 && end && *end == '\0' && out >= lo && out <= hi;
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
         "                     keylane_state_memory (the same in memory)";
  out << "\n  --workloads x,y    workloads to run (default all):";
  for (auto& w : workload_names())
    out << " " << w;
  out << "\n  --events N         most events per throughput run (default 200000; "
         "--quick: 5000);\n"
         "                     a warm-up run sizes each way's runs to ~0.6 s "
         "within [N/10, N]\n"
      << "  --work ns,ns       handler work per event in ns (default 0,1000)\n"
      << "  --rate R           open-loop rate in events/s (default 200000)\n"
      << "  --latency-seconds S  length of one open-loop run (default 1; "
         "--quick: 0.1)\n"
      << "  --schedulers s,s   CAF schedulers for keylane (default "
         "sharing,stealing)\n"
      << "  --set sec.key=val  override a keylane setting of the keylane ways, "
         "as in its\n"
         "                     config file (repeatable; docs/config.md), e.g. "
         "--set runtime.window=4096\n"
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
  bool runs_set = false, events_set = false, lat_set = false;
  std::vector<std::string> args(argv + 1, argv + argc);
  for (size_t i = 0; i < args.size(); ++i) {
    const auto& a = args[i];
    auto value = [&](std::string& out) {
      if (i + 1 >= args.size()) {
        error = a + " needs a value";
        return false;
      }
      out = args[++i];
      return true;
    };
    std::string v;
    double x = 0;
    if (a == "--quick") {
      o.quick = true;
    } else if (a == "--json") {
      o.json = true;
    } else if (a == "--no-plots") {
      o.plots = false;
    } else if (a == "--no-sysalloc") {
      o.sysalloc = false;
    } else if (a == "--help" || a == "-h") {
      o.help = true;
    } else if (a == "--runs") {
      if (!value(v))
        return std::nullopt;
      if (!to_number(v, 1, 1000, x) || x != static_cast<int>(x)) {
        error = "--runs " + v + ": must be a whole number from 1 to 1000";
        return std::nullopt;
      }
      o.runs = static_cast<int>(x);
      runs_set = true;
    } else if (a == "--producers") {
      if (!value(v))
        return std::nullopt;
      if (!to_number(v, 1, 64, x) || x != static_cast<int>(x)) {
        error = "--producers " + v + ": must be a whole number from 1 to 64";
        return std::nullopt;
      }
      o.producers = static_cast<int>(x);
    } else if (a == "--events") {
      if (!value(v))
        return std::nullopt;
      if (!to_number(v, 100, 1e8, x) || x != static_cast<double>(static_cast<size_t>(x))) {
        error = "--events " + v + ": must be a whole number from 100 to 1e8";
        return std::nullopt;
      }
      o.events = static_cast<size_t>(x);
      events_set = true;
    } else if (a == "--rate") {
      if (!value(v))
        return std::nullopt;
      if (!to_number(v, 1, 1e8, x)) {
        error = "--rate " + v + ": must be a number from 1 to 1e8";
        return std::nullopt;
      }
      o.rate = x;
    } else if (a == "--latency-seconds") {
      if (!value(v))
        return std::nullopt;
      if (!to_number(v, 0.001, 600, x)) {
        error = "--latency-seconds " + v + ": must be from 0.001 to 600";
        return std::nullopt;
      }
      o.latency_seconds = x;
      lat_set = true;
    } else if (a == "--work") {
      if (!value(v))
        return std::nullopt;
      o.work_ns.clear();
      for (auto& part : split(v)) {
        if (!to_number(part, 0, 1e7, x) || x != static_cast<double>(static_cast<uint64_t>(x))) {
          error = "--work " + part + ": must be whole nanoseconds from 0 to 1e7";
          return std::nullopt;
        }
        o.work_ns.push_back(static_cast<uint64_t>(x));
      }
      if (o.work_ns.empty()) {
        error = "--work needs at least one value";
        return std::nullopt;
      }
    } else if (a == "--ways") {
      if (!value(v))
        return std::nullopt;
      o.ways = split(v);
      if (!check_names(o.ways, way_names(), "ways", error))
        return std::nullopt;
    } else if (a == "--workloads") {
      if (!value(v))
        return std::nullopt;
      o.workloads = split(v);
      if (!check_names(o.workloads, workload_names(), "workloads", error))
        return std::nullopt;
    } else if (a == "--schedulers") {
      if (!value(v))
        return std::nullopt;
      o.schedulers = split(v);
      if (!check_names(o.schedulers, {"sharing", "stealing"}, "schedulers", error))
        return std::nullopt;
    } else if (a == "--results") {
      if (!value(v))
        return std::nullopt;
      if (v.empty()) {
        error = "--results needs a directory";
        return std::nullopt;
      }
      o.results = v;
    } else if (a == "--set") {
      if (!value(v))
        return std::nullopt;
      o.sets.push_back(v);
    } else if (a == "--child-out") {
      if (!value(o.child_out))
        return std::nullopt;
    } else {
      error = "unknown argument '" + a + "' (see --help)";
      return std::nullopt;
    }
  }
  if (o.quick) {
    if (!runs_set)
      o.runs = 1;
    if (!events_set)
      o.events = 5000;
    if (!lat_set)
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
