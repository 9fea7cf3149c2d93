// SPDX-License-Identifier: Apache-2.0
// The latency floor of one hand-off, with no keylane code: a paced
// producer (10,000 events/s, as keylane_bench --rate 10000) hands each
// event to (a) a plain thread waiting on a condition variable, and (b) one
// CAF 0.17 event-based actor on the work-sharing scheduler with two
// workers (keylane's default). The receiver does ~1 µs of work and records
// the time since the event was due. Both run alternately in one
// process, three runs each; the output is one JSON object per receiver
// with the median p50 / p99 / p99.9 in µs. It shows what one CAF hop
// costs on this machine before keylane adds anything (docs/performance.md).
#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <deque>
#include <mutex>
#include <thread>
#include <vector>

#include <sys/prctl.h>
#include <time.h>

#include <caf/all.hpp>

namespace {

using steady = std::chrono::steady_clock;

constexpr double rate = 10000;
constexpr auto run_length = std::chrono::seconds{1};
constexpr int64_t work_ns = 1000;
constexpr int runs = 3;

int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
           steady::now().time_since_epoch())
    .count();
}

void busy(int64_t ns) {
  auto until = now_ns() + ns;
  while (now_ns() < until) {
  }
}

// Sleeps to an absolute time, as the benchmark's pacer does (the producer
// thread sleeps between events, so each hand-off finds its target asleep
// the way a light load does).
void sleep_until_ns(int64_t t) {
  timespec ts{static_cast<time_t>(t / 1000000000), static_cast<long>(t % 1000000000)};
  clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, nullptr);
}

struct latencies {
  std::vector<int64_t> ns;
  std::atomic<size_t> n{0};
  explicit latencies(size_t cap) : ns(cap) {}
  void record(int64_t sent) { ns[n.fetch_add(1)] = now_ns() - sent; }
};

// Paces `send(due_ns)` at `rate` for `run_length`; returns events sent.
// As keylane_bench's pacer: latency counts from the due time (the sleep's
// overshoot included), with the timer slack at its least.
template <class Send>
size_t pace(Send send) {
  prctl(PR_SET_TIMERSLACK, 1);
  auto start = now_ns() + 1000000;
  auto gap = static_cast<int64_t>(1e9 / rate);
  auto end = start + std::chrono::nanoseconds{run_length}.count();
  size_t sent = 0;
  for (auto due = start; due < end; due += gap) {
    sleep_until_ns(due);
    send(due);
    ++sent;
  }
  return sent;
}

size_t capacity() {
  return static_cast<size_t>(rate * std::chrono::duration<double>(run_length).count()) + 16;
}

void wait_for(const latencies& l, size_t n) {
  while (l.n.load() < n)
    std::this_thread::sleep_for(std::chrono::milliseconds{1});
}

void run_cv_thread(latencies& l) {
  std::mutex mtx;
  std::condition_variable cv;
  std::deque<int64_t> q;
  bool stop = false;
  std::thread consumer{[&] {
    std::unique_lock<std::mutex> guard{mtx};
    for (;;) {
      cv.wait(guard, [&] { return stop || !q.empty(); });
      if (q.empty())
        return;
      auto sent = q.front();
      q.pop_front();
      guard.unlock();
      busy(work_ns);
      l.record(sent);
      guard.lock();
    }
  }};
  auto n = pace([&](int64_t sent) {
    {
      std::lock_guard<std::mutex> guard{mtx};
      q.push_back(sent);
    }
    cv.notify_one();
  });
  wait_for(l, n);
  {
    std::lock_guard<std::mutex> guard{mtx};
    stop = true;
  }
  cv.notify_one();
  consumer.join();
}

void run_caf_actor(latencies& l) {
  // As keylane configures CAF by default (engine.cpp).
  caf::actor_system_config cfg;
  cfg.set("scheduler.policy", caf::atom("sharing"));
  cfg.set("scheduler.max-threads", 2);
  cfg.set("scheduler.max-throughput", 300);
  cfg.set("logger.verbosity", caf::atom("quiet"));
  caf::actor_system sys{cfg};
  auto receiver = sys.spawn([&l]() -> caf::behavior {
    return {[&l](int64_t sent) {
      busy(work_ns);
      l.record(sent);
    }};
  });
  auto n = pace([&](int64_t sent) { caf::anon_send(receiver, sent); });
  wait_for(l, n);
  caf::anon_send_exit(receiver, caf::exit_reason::user_shutdown);
}

struct figures {
  double p50, p99, p999;
};

figures percentiles(latencies& l) {
  std::vector<int64_t> v(l.ns.begin(), l.ns.begin() + static_cast<std::ptrdiff_t>(l.n.load()));
  std::sort(v.begin(), v.end());
  auto at = [&](double q) {
    return v.empty() ? 0.0 : v[static_cast<size_t>(q * double(v.size() - 1))] / 1000.0;
  };
  return {at(0.50), at(0.99), at(0.999)};
}

double median(std::vector<double> x) {
  std::sort(x.begin(), x.end());
  return x[x.size() / 2];
}

void print(const char* name, const std::vector<figures>& fs) {
  std::vector<double> p50, p99, p999;
  for (auto& f : fs) {
    p50.push_back(f.p50);
    p99.push_back(f.p99);
    p999.push_back(f.p999);
  }
  std::printf("{\"receiver\": \"%s\", \"rate_per_s\": %.0f, \"work_ns\": %lld, "
              "\"runs\": %zu, \"p50_us\": %.1f, \"p99_us\": %.1f, "
              "\"p999_us\": %.1f}\n",
              name, rate, static_cast<long long>(work_ns), fs.size(),
              median(p50), median(p99), median(p999));
}

} // namespace

int main() {
  std::vector<figures> cv, caf;
  for (int i = 0; i < runs; ++i) {
    latencies a{capacity()};
    run_cv_thread(a);
    cv.push_back(percentiles(a));
    latencies b{capacity()};
    run_caf_actor(b);
    caf.push_back(percentiles(b));
  }
  print("cv_thread", cv);
  print("caf_actor", caf);
  return 0;
}
