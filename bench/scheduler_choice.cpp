// SPDX-License-Identifier: Apache-2.0
// Measures CAF's `sharing` and `stealing` schedulers on keylane's own
// traffic, side by side in one process, to pick the default policy.
// Prints median and spread of events/s over several alternating runs.

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include <keylane/runtime.hpp>

#include "command_line.hpp"

namespace {

struct doubler : keylane::handler<uint64_t, uint64_t> {
  void on_event(uint64_t& x, keylane::completion<uint64_t> done) override {
    done.ok(x * 2);
  }
};

struct workload {
  const char* name;
  size_t keys;
  bool hot; // half of the events on key 0
  size_t window;
};

double run_once(keylane::scheduler_policy policy, const workload& w,
                size_t events) {
  keylane::settings s;
  s.max_active_keys = 1024;
  s.window = w.window;
  s.threads = 2;
  s.order = keylane::order_mode::global; // what its figures were measured with
  s.key_backlog = 65536;                 // (the defaults before 0.2.0)
  s.scheduler = policy;
  keylane::handler_factory make = [](const keylane::handler_params&) {
    return std::make_unique<doubler>();
  };
  std::atomic<uint64_t> seen{0};
  auto rt = keylane::runtime<uint64_t, uint64_t>::start(
    s, make, [&](keylane::event<uint64_t, uint64_t>&) { ++seen; });
  if (!rt) {
    std::fprintf(stderr, "start failed: %s\n",
                 keylane::render(rt.error()).c_str());
    std::exit(1);
  }
  std::mt19937_64 rng{7};
  auto t0 = std::chrono::steady_clock::now();
  for (size_t i = 0; i < events; ++i) {
    uint64_t k = (w.hot && (rng() & 1)) ? 0 : rng() % w.keys;
    if (!(*rt)->submit(keylane::key{k}, uint64_t{i})) {
      std::fprintf(stderr, "submit rejected\n");
      std::exit(1);
    }
  }
  if (!(*rt)->drain(std::chrono::minutes(5))) {
    std::fprintf(stderr, "drain timed out\n");
    std::exit(1);
  }
  auto secs = std::chrono::duration<double>(std::chrono::steady_clock::now()
                                            - t0)
                .count();
  (*rt)->stop();
  return static_cast<double>(events) / secs;
}

} // namespace

int main(int argc, char** argv) {
  bool quick = false;
  keylane::cli::command_line cl{"scheduler_choice",
                                "usage: scheduler_choice [--quick]\n"};
  cl.flag("--quick", quick);
  cl.parse(argc, argv);
  size_t events = quick ? 20000 : 200000;
  int runs = quick ? 3 : 5;
  const workload loads[] = {
    {"uniform_10k_unbounded", 10000, false, keylane::unbounded},
    {"uniform_10k_window_1024", 10000, false, 1024},
    {"hot_key_window_1024", 1000, true, 1024},
  };
  std::printf("%-26s %-9s %12s %12s %12s\n", "workload", "policy",
              "median ev/s", "min", "max");
  for (auto& w : loads) {
    std::vector<double> share, steal;
    for (int r = 0; r < runs; ++r) { // alternate, so drift hits both alike
      share.push_back(run_once(keylane::scheduler_policy::sharing, w, events));
      steal.push_back(run_once(keylane::scheduler_policy::stealing, w, events));
    }
    for (auto* v : {&share, &steal}) {
      std::sort(v->begin(), v->end());
      std::printf("%-26s %-9s %12.0f %12.0f %12.0f\n", w.name,
                  v == &share ? "sharing" : "stealing", (*v)[v->size() / 2],
                  v->front(), v->back());
    }
  }
}
