// SPDX-License-Identifier: Apache-2.0
#include "driver.hpp"

#include <atomic>
#include <condition_variable>
#include <cstdio>
#include <mutex>
#include <thread>

#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

#include "measure.hpp"

namespace keylane::bench {

namespace {

// Ends the process if a run overstays: a hung way must not hang the whole
// benchmark (or CTest). Armed for one run at a time.
class watchdog {
public:
  watchdog(std::string what, double seconds)
    : what_(std::move(what)), thread_([this, seconds] {
        std::unique_lock<std::mutex> lock{mtx_};
        if (!cv_.wait_for(lock, std::chrono::duration<double>(seconds),
                          [this] { return done_; })) {
          std::fprintf(stderr,
                       "keylane_bench: %s still running after %.0f s: hung; "
                       "aborting\n",
                       what_.c_str(), seconds);
          std::fflush(stderr);
          _exit(3);
        }
      }) {}
  ~watchdog() {
    {
      std::lock_guard<std::mutex> lock{mtx_};
      done_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }

private:
  std::string what_;
  std::mutex mtx_;
  std::condition_variable cv_;
  bool done_ = false;
  std::thread thread_;
};

void sleep_until_ns(int64_t t) {
  timespec ts{static_cast<time_t>(t / 1000000000),
              static_cast<long>(t % 1000000000)};
  while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, nullptr) != 0) {
  }
}

void append(std::string& note, const std::string& more) {
  if (more.empty())
    return;
  note += (note.empty() ? "" : "; ") + more;
}

// Open loop: event i is due at start + i / rate, whether or not the way
// kept up; its latency counts from that due time, so a way that stalls the
// producer is charged for the wait (no coordinated omission). The pacer
// sleeps rather than spins (a spinning producer would take a core from the
// way on a 2-core machine); the sleep overshoot is recorded as pacer lag.
bool submit_paced(way& w, const workload& wl, size_t n, double rate,
                  common::latency_histogram& lag) {
  static thread_local bool slack_set = [] {
    prctl(PR_SET_TIMERSLACK, 1); // wake as close to the deadline as possible
    return true;
  }();
  (void)slack_set;
  double period = 1e9 / rate;
  int64_t start = now_ns() + 1000000;
  for (size_t i = 0; i < n; ++i) {
    int64_t due = start + static_cast<int64_t>(static_cast<double>(i) * period);
    int64_t now = now_ns();
    if (due > now) {
      sleep_until_ns(due);
      now = now_ns();
    }
    lag.record(now - due);
    item it = wl.events[i];
    it.scheduled_ns = due;
    if (!w.submit(it))
      return false;
  }
  return true;
}

} // namespace

sample run_once(const way_spec& spec, const workload& wl, const run_params& p) {
  sample s;
  s.events = std::min(p.events, wl.events.size());
  auto what = spec.name + (spec.scheduler.empty() ? "" : "/" + spec.scheduler)
              + " on " + wl.name;
  watchdog dog{what, p.timeout_s + 120};
  bool open_loop = p.rate > 0;
  s.base_rss_mb = rss_mb();
  auto threads0 = process_threads();
  // Room for every worker of the way and up to 32 other threads that may
  // deliver (producers, a runtime's output thread).
  output out{wl.key_space, open_loop, 32 + spec.threads};
  auto w = spec.make();
  if (auto err = w->start(out, p.work_iters); !err.empty()) {
    s.note = err;
    return s;
  }
  reset_peak_rss();
  auto cpu0 = process_cpu_seconds();
  auto cs0 = process_context_switches();
  auto stat0 = sample_cpu();
  auto t0 = now_ns();
  bool all_taken = true;
  if (open_loop) {
    all_taken = submit_paced(*w, wl, s.events, p.rate, s.pacer_lag);
  } else if (p.producers <= 1) {
    for (size_t i = 0; i < s.events && all_taken; ++i)
      all_taken = w->submit(wl.events[i]);
  } else {
    std::atomic<bool> refused{false};
    std::vector<std::thread> producers;
    auto n = static_cast<uint64_t>(p.producers);
    for (uint64_t t = 0; t < n; ++t)
      producers.emplace_back([&, t] {
        for (size_t i = 0; i < s.events && !refused.load(std::memory_order_relaxed); ++i)
          if (wl.events[i].key % n == t && !w->submit(wl.events[i]))
            refused = true;
      });
    for (auto& th : producers)
      th.join();
    all_taken = !refused;
  }
  if (!all_taken)
    append(s.note, "the way refused a submit");
  bool all_delivered = out.wait_for(
    s.events, std::chrono::nanoseconds(static_cast<int64_t>(p.timeout_s * 1e9)));
  auto t1 = now_ns();
  auto cpu1 = process_cpu_seconds();
  auto cs1 = process_context_switches();
  auto stat1 = sample_cpu();
  s.way_threads = process_threads() - threads0;
  s.state = w->keyed_state();
  s.peak_rss_mb = peak_rss_mb();
  s.seconds = static_cast<double>(t1 - t0) * 1e-9;
  s.cpu_s = cpu1 - cpu0;
  s.context_switches = cs1 - cs0;
  s.other_load = other_load(stat0, stat1, s.cpu_s);
  s.delivered = out.delivered();
  s.violations = out.violations();
  s.failures = out.failures();
  if (open_loop)
    s.latency = out.latency();
  if (!all_delivered)
    append(s.note, "only " + std::to_string(s.delivered) + " of "
                     + std::to_string(s.events) + " delivered after "
                     + std::to_string(static_cast<int>(p.timeout_s)) + " s");
  if (s.failures != 0)
    append(s.note, std::to_string(s.failures) + " events failed");
  if (p.measure_idle && all_delivered) {
    s.settled = w->settle(std::chrono::milliseconds(10000));
    if (!s.settled)
      append(s.note, "lanes still active 10 s after the last delivery");
    std::this_thread::sleep_for(std::chrono::milliseconds(p.idle_pause_ms));
    s.idle_rss_mb = rss_mb();
  }
  s.lanes_spawned = w->lanes_spawned();
  s.rejected_submits = w->rejected_submits();
  append(s.note, w->stop());
  w.reset();
  s.completed = all_taken && all_delivered && s.failures == 0
                && s.delivered == s.events;
  return s;
}

} // namespace keylane::bench
