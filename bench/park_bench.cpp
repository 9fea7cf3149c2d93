// SPDX-License-Identifier: Apache-2.0
// park_bench: how fast a runtime parks when a downstream system is down.
// Every handler call fails for good, so each key's first event parks and
// every later one parks behind it: the rate is the park store's. Prints a
// table and one JSON line per run, then the median and the spread.
//
//   park_bench [--events N] [--keys K] [--runs R] [--store sqlite|memory]
//              [--dir DIR] [--threads T]

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <unistd.h>

#include <keylane/errc.hpp>
#include <keylane/runtime.hpp>

#include "command_line.hpp"

namespace {

using namespace keylane;
using rt_type = runtime<std::string, std::string>;

struct options {
  size_t events = 200'000;
  size_t keys = 1'000;
  size_t runs = 3;
  size_t threads = 2;
  park_mode store = park_mode::sqlite;
  std::string dir = std::filesystem::temp_directory_path().string();
};

// The downstream system is down: nothing succeeds, nothing is worth a retry.
struct down : handler<std::string, std::string> {
  void on_event(std::string&, completion<std::string> done) override {
    done.fail_permanently("downstream unavailable");
  }
};

constexpr const char* usage
  = "usage: park_bench [--events N] [--keys K] [--runs R]"
    " [--store sqlite|memory] [--dir DIR] [--threads T]\n";

options parse(int argc, char** argv) {
  options o;
  std::string store = "sqlite";
  keylane::cli::command_line cl{"park_bench", usage};
  cl.count("--events", o.events, 1);
  cl.count("--keys", o.keys, 1);
  cl.count("--runs", o.runs, 1);
  cl.count("--threads", o.threads, 0);
  cl.text("--dir", o.dir);
  cl.text("--store", store)->check(CLI::IsMember({"sqlite", "memory"}));
  cl.parse(argc, argv);
  o.store = store == "sqlite" ? park_mode::sqlite : park_mode::memory;
  return o;
}

// One run: submits every event, waits for every tombstone; events/s.
double run_once(const options& o, size_t run) {
  auto path = std::filesystem::path{o.dir}
              / ("park_bench_" + std::to_string(::getpid()) + "_"
                 + std::to_string(run) + ".db");
  for (auto* suffix : {"", "-wal", "-shm"})
    std::filesystem::remove(path.string() + suffix);
  settings s;
  s.threads = o.threads;
  s.order = order_mode::per_key;
  s.park = o.store;
  s.park_path = path.string();
  std::mutex mtx;
  std::condition_variable cv;
  size_t seen = 0, parked = 0;
  auto on_output = [&](rt_type::event_type& ev) {
    std::lock_guard<std::mutex> guard{mtx};
    ++seen;
    parked += ev.status == outcome::parked;
    if (seen == o.events)
      cv.notify_all();
  };
  handler_factory make = [](const handler_params&) {
    return std::make_unique<down>();
  };
  auto rt = rt_type::start(s, make, on_output);
  if (!rt) {
    std::cerr << "park_bench: " << render(rt.error()) << '\n';
    std::exit(1);
  }
  auto t0 = std::chrono::steady_clock::now();
  for (size_t i = 0; i < o.events; ++i)
    if (!(*rt)->submit(key{uint64_t{i % o.keys}}, std::to_string(i))) {
      std::cerr << "park_bench: submit " << i << " refused\n";
      std::exit(1);
    }
  {
    std::unique_lock<std::mutex> guard{mtx};
    cv.wait(guard, [&] { return seen == o.events; });
  }
  auto secs = std::chrono::duration<double>(std::chrono::steady_clock::now()
                                            - t0)
                .count();
  auto keys = (*rt)->parked_keys();
  uint64_t stored = 0;
  if (keys)
    for (auto& pk : *keys)
      stored += pk.count;
  (*rt)->stop();
  rt->reset();
  for (auto* suffix : {"", "-wal", "-shm"})
    std::filesystem::remove(path.string() + suffix);
  if (parked != o.events || stored != o.events) {
    std::cerr << "park_bench: " << parked << " tombstones, " << stored
              << " stored records, expected " << o.events << '\n';
    std::exit(1);
  }
  auto rate = static_cast<double>(o.events) / secs;
  std::printf("%-4zu %-7s %9zu %7zu %9.3f %12.0f\n", run + 1,
              o.store == park_mode::sqlite ? "sqlite" : "memory", o.events,
              o.keys, secs, rate);
  std::printf("{\"run\":%zu,\"store\":\"%s\",\"events\":%zu,\"keys\":%zu,"
              "\"seconds\":%.6f,\"events_per_s\":%.0f}\n",
              run + 1, o.store == park_mode::sqlite ? "sqlite" : "memory",
              o.events, o.keys, secs, rate);
  std::fflush(stdout);
  return rate;
}

} // namespace

int main(int argc, char** argv) {
  auto o = parse(argc, argv);
  std::printf("park rate, downstream down: every event parks (%u cores)\n",
              std::thread::hardware_concurrency());
  std::printf("%-4s %-7s %9s %7s %9s %12s\n", "RUN", "STORE", "EVENTS",
              "KEYS", "SECONDS", "EVENTS/S");
  std::vector<double> rates;
  for (size_t r = 0; r < o.runs; ++r)
    rates.push_back(run_once(o, r));
  std::sort(rates.begin(), rates.end());
  auto n = rates.size();
  auto median = n % 2 ? rates[n / 2] : (rates[n / 2 - 1] + rates[n / 2]) / 2;
  std::printf("median %.0f events/s, min %.0f, max %.0f over %zu runs\n",
              median, rates.front(), rates.back(), n);
  return 0;
}
