// SPDX-License-Identifier: Apache-2.0
// state_rollback_bench: what taking back a failed attempt costs every
// event of a key whose state is large. One key's state is a map of N
// entries; each event adds 1 to one entry and succeeds. Rollback by copy
// copies the whole map before each attempt, rollback by journal records
// one undo step, and `off` (state.rollback = false) does neither. Prints
// a table and one JSON line per run, then the medians (docs/state.md).
//
//   state_rollback_bench [--sizes 10,100,...] [--modes copy,journal,off]
//                        [--events N] [--seconds S] [--runs R]

#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <caf/meta/type_name.hpp>

#include <keylane/runtime.hpp>
#include <keylane/stateful_handler.hpp>

#include "command_line.hpp"

namespace {

using namespace keylane;

struct entries_state {
  std::map<uint64_t, int64_t> entries;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, entries_state& x) {
  return f(caf::meta::type_name("entries_state"), x.entries);
}

using rt_type = runtime<uint64_t, int64_t>;

// The first event fills the state to `size` entries; every later one adds
// 1 to entry `value % size`, recording its undo (ignored unless by journal).
struct adding : stateful_handler<uint64_t, int64_t, entries_state> {
  adding(rollback_by by, uint64_t size) : stateful_handler(by), size_(size) {}

  void on_event(uint64_t& v, completion<int64_t> done) override {
    auto& m = state().entries;
    if (m.empty())
      for (uint64_t i = 0; i < size_; ++i)
        m.emplace(i, 0);
    auto& x = m[v % size_];
    undo([at = v % size_, old = x](entries_state& s) { s.entries[at] = old; });
    done.ok(++x);
  }

  uint64_t size_;
};

double cpu_seconds() {
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  return static_cast<double>(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec)
         + static_cast<double>(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

struct options {
  std::vector<uint64_t> sizes{10, 100, 1000, 10000, 100000};
  std::vector<std::string> modes{"copy", "journal", "off"};
  size_t events = 20000;
  double seconds = 0.5;
  size_t runs = 3;
};

template <class T, class F>
std::vector<T> split(const std::string& text, F convert) {
  std::vector<T> out;
  std::stringstream in{text};
  std::string part;
  while (std::getline(in, part, ','))
    out.push_back(convert(part));
  return out;
}

struct result {
  size_t events = 0;
  double cpu_us = 0, per_s = 0;
};

// One run: fills the state, then submits events in rounds of 64 until
// `events` or `seconds` are spent; CPU of the process over those rounds.
result run_once(const options& o, uint64_t size, const std::string& mode) {
  settings s;
  s.threads = 2;
  s.order = order_mode::per_key;
  s.state_store = state_backend::memory;
  s.state_rollback = mode != "off";
  auto by = mode == "journal" ? rollback_by::journal : rollback_by::copy;
  auto rt = rt_type::start(
    s,
    [by, size](const handler_params&) {
      return std::make_unique<adding>(by, size);
    },
    [](rt_type::event_type& ev) {
      if (ev.status != outcome::ok) {
        std::cerr << "state_rollback_bench: an event ended "
                  << to_string(ev.status) << ": " << ev.error << '\n';
        std::exit(1);
      }
    });
  if (!rt) {
    std::cerr << "state_rollback_bench: " << render(rt.error()) << '\n';
    std::exit(1);
  }
  auto submit = [&](uint64_t v) {
    if (!(*rt)->submit(key{uint64_t{1}}, uint64_t{v})) {
      std::cerr << "state_rollback_bench: submit refused\n";
      std::exit(1);
    }
  };
  auto drain = [&] {
    if (!(*rt)->drain(std::chrono::seconds(60))) {
      std::cerr << "state_rollback_bench: events not delivered in 60 s\n";
      std::exit(1);
    }
  };
  submit(0);
  drain();
  result r;
  auto cpu0 = cpu_seconds();
  auto t0 = std::chrono::steady_clock::now();
  std::chrono::duration<double> took{0};
  while (r.events < o.events && took.count() < o.seconds) {
    for (int i = 0; i < 64 && r.events < o.events; ++i)
      submit(++r.events * 7919);
    drain();
    took = std::chrono::steady_clock::now() - t0;
  }
  auto cpu = cpu_seconds() - cpu0;
  (*rt)->stop();
  r.cpu_us = cpu * 1e6 / static_cast<double>(r.events);
  r.per_s = static_cast<double>(r.events) / took.count();
  return r;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  auto n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

} // namespace

int main(int argc, char** argv) {
  options o;
  std::string sizes, modes;
  keylane::cli::command_line cl{
    "state_rollback_bench",
    "usage: state_rollback_bench [--sizes 10,100,...] [--modes "
    "copy,journal,off] [--events N] [--seconds S] [--runs R]\n"};
  cl.text("--sizes", sizes);
  cl.text("--modes", modes);
  cl.count("--events", o.events, 1);
  cl.count("--runs", o.runs, 1);
  cl.text("--seconds", o.seconds);
  cl.parse(argc, argv);
  if (!(o.seconds > 0))
    cl.fail("--seconds must be above 0");
  if (!sizes.empty())
    o.sizes = split<uint64_t>(sizes, [&](const std::string& x) {
      auto n = std::strtoull(x.c_str(), nullptr, 10);
      if (n == 0)
        cl.fail("--sizes takes entry counts of at least 1: '" + x + "'");
      return n;
    });
  if (!modes.empty())
    o.modes = split<std::string>(modes, [&](const std::string& x) {
      if (x != "copy" && x != "journal" && x != "off")
        cl.fail("--modes takes copy, journal and off: '" + x + "'");
      return x;
    });
  std::printf("%-8s %-8s %4s %8s %14s %12s\n", "ENTRIES", "ROLLBACK", "RUN",
              "EVENTS", "CPU US/EVENT", "EVENTS/S");
  std::vector<std::string> summary;
  for (auto size : o.sizes)
    for (const auto& mode : o.modes) {
      std::vector<double> cpu, rate;
      for (size_t run = 1; run <= o.runs; ++run) {
        auto r = run_once(o, size, mode);
        cpu.push_back(r.cpu_us);
        rate.push_back(r.per_s);
        std::printf("%-8llu %-8s %4zu %8zu %14.2f %12.0f\n",
                    static_cast<unsigned long long>(size), mode.c_str(), run,
                    r.events, r.cpu_us, r.per_s);
        std::printf("{\"entries\":%llu,\"rollback\":\"%s\",\"run\":%zu,"
                    "\"events\":%zu,\"cpu_us_per_event\":%.3f,"
                    "\"events_per_s\":%.0f}\n",
                    static_cast<unsigned long long>(size), mode.c_str(), run,
                    r.events, r.cpu_us, r.per_s);
        std::fflush(stdout);
      }
      char line[160];
      std::snprintf(line, sizeof line,
                    "%-8llu %-8s median %10.2f us/event, %10.0f events/s",
                    static_cast<unsigned long long>(size), mode.c_str(),
                    median(cpu), median(rate));
      summary.emplace_back(line);
    }
  for (const auto& line : summary)
    std::printf("%s\n", line.c_str());
  return 0;
}
