// Property tests of DESIGN.md's invariants on adversarial random workloads:
// a hot key with half the traffic, random async latencies and fates,
// 4 producers, caps 1 / 8 / 64, windows 1 / 64 / unbounded.

#include <catch2/catch.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <keylane/runtime.hpp>

#include "property_support.hpp"

using namespace keylane;
using namespace keylane::test;

namespace {

using rt_type = runtime<payload, uint64_t>;
using ev_type = rt_type::event_type;

struct run_params {
  size_t events = 20000;
  size_t keys = 128;
  size_t producers = 4;
  size_t cap = 8;
  size_t window = 64;
  order_mode order = order_mode::global;
  overflow_policy overflow = overflow_policy::block;
  bool callback = true;
  uint32_t max_latency_us = 40;
  // Reload random caps (1 to 2 cap) and windows (1 to 2 window, or
  // unbounded) while producers run; the bounds checked are the largest set.
  bool reload = false;
};

std::string describe(const run_params& p) {
  return std::string{p.reload ? "reloading, from " : ""} + "cap="
         + std::to_string(p.cap) + " window="
         + (p.window == unbounded ? std::string{"unbounded"}
                                  : std::to_string(p.window))
         + " order=" + to_string(p.order) + " overflow="
         + to_string(p.overflow) + (p.callback ? " callback" : " pull");
}

// What the output side saw.
struct output_log {
  std::mutex mtx;
  std::vector<uint8_t> seen;                  // per seq: times delivered
  std::vector<outcome> status;                // per seq
  std::vector<uint64_t> result;               // per seq
  std::vector<payload> payloads;              // per seq
  std::vector<int64_t> last_index;            // per key and producer
  std::vector<int64_t> last_seq;              // per key
  uint64_t next_global = 0;
  uint64_t global_breaks = 0;
  uint64_t key_order_breaks = 0;
  uint64_t count = 0;

  output_log(size_t n, size_t keys, size_t producers)
    : seen(n), status(n), result(n), payloads(n),
      last_index(keys * producers, -1), last_seq(keys, -1) {}

  void take(ev_type& e, order_mode order, size_t producers) {
    std::lock_guard<std::mutex> guard{mtx};
    ++count;
    if (e.seq >= seen.size()) {
      ++global_breaks; // a sequence number that was never handed out
      return;
    }
    ++seen[e.seq];
    status[e.seq] = e.status;
    result[e.seq] = e.result ? *e.result : 0;
    payloads[e.seq] = e.payload;
    if (order == order_mode::global) {
      if (e.seq != next_global)
        ++global_breaks;
      next_global = e.seq + 1;
    }
    if (order != order_mode::none) {
      auto& last = last_index[e.payload.key_id * producers + e.payload.producer];
      if (static_cast<int64_t>(e.payload.index) <= last)
        ++key_order_breaks;
      last = static_cast<int64_t>(e.payload.index);
      // A key's events are sequenced under its shard lock, so their
      // sequence numbers rise along the key, across producers too.
      auto& prev = last_seq[e.payload.key_id];
      if (static_cast<int64_t>(e.seq) <= prev)
        ++key_order_breaks;
      prev = static_cast<int64_t>(e.seq);
    }
  }
};

void run_property(const run_params& rp, uint64_t seed) {
  INFO("seed " << seed << " (rerun with KEYLANE_SEED=" << seed << "), "
               << describe(rp));
  auto work = make_workload(seed, rp.events, rp.keys, rp.producers,
                            rp.max_latency_us);
  observer obs{rp.keys, rp.producers};
  output_log log{rp.events, rp.keys, rp.producers};
  size_t max_cap = rp.cap;       // the largest cap in force at any time
  size_t max_window = rp.window; // and window
  uint64_t reloads = 0;
  {
    settings cfg;
    cfg.max_active_keys = rp.cap;
    cfg.window = rp.window;
    cfg.order = rp.order;
    cfg.overflow = rp.overflow;
    cfg.threads = 2;
    // Failed events end as tombstones and their keys go on; parking has its
    // own properties (parking_test.cpp).
    cfg.park = park_mode::none;
    cfg.handler = "checking";
    handler_factory make = [&obs](const handler_params&) {
      return std::make_unique<checking_handler>(&obs);
    };
    rt_type::callback cb;
    if (rp.callback)
      cb = [&](ev_type& e) { log.take(e, rp.order, rp.producers); };
    auto started = rt_type::start(cfg, make, cb);
    REQUIRE(started);
    auto& rt = **started;
    std::atomic<uint64_t> rejected{0};
    std::atomic<uint64_t> accepted{0};
    std::atomic<bool> producers_done{false};
    std::thread puller;
    if (!rp.callback)
      puller = std::thread{[&] {
        std::unique_ptr<ev_type> e;
        while (!producers_done || log.count < accepted.load()) {
          if (rt.pull(e, std::chrono::milliseconds(20)))
            log.take(*e, rp.order, rp.producers);
        }
      }};
    std::vector<std::thread> producers;
    for (size_t p = 0; p < rp.producers; ++p)
      producers.emplace_back([&, p] {
        for (auto& x : work[p]) {
          auto copy = x;
          for (;;) {
            auto res = rt.submit(key{uint64_t{x.key_id}}, std::move(copy));
            if (res) {
              ++accepted;
              break;
            }
            // Rejected: the payload is still ours; retry the same event so
            // the producer's order holds.
            ++rejected;
            if (res.code() != errc::window_full
                && res.code() != errc::key_backlog_full)
              return;
            std::this_thread::yield();
          }
        }
      });
    std::atomic<bool> stop_reloading{false};
    std::thread reloader;
    if (rp.reload)
      reloader = std::thread{[&] {
        std::mt19937_64 rng{seed ^ 0x5eedu};
        while (!stop_reloading) {
          auto next = rt.config();
          next.max_active_keys = 1 + rng() % (2 * rp.cap);
          next.window = rng() % 8 == 0 || rp.window == unbounded
                          ? unbounded
                          : 1 + rng() % (2 * rp.window);
          next.log = rng() % 2 == 0 ? log_level::warning : log_level::error;
          max_cap = std::max(max_cap, next.max_active_keys);
          max_window = std::max(max_window, next.window);
          if (rt.reload(next))
            ++reloads;
          std::this_thread::sleep_for(std::chrono::microseconds(rng() % 500));
        }
        // Back to the start values, so the run can finish at its pace.
        auto last = rt.config();
        last.max_active_keys = rp.cap;
        last.window = rp.window;
        if (rt.reload(last))
          ++reloads;
      }};
    for (auto& t : producers)
      t.join();
    stop_reloading = true;
    if (reloader.joinable())
      reloader.join();
    producers_done = true;
    REQUIRE(accepted == rp.events);
    CHECK(rt.drain(std::chrono::seconds(120)));
    if (puller.joinable())
      puller.join();
    auto st = rt.stats();
    auto report = rt.stop();
    CHECK(report.unfinished.empty());
    CHECK(report.accepted == rp.events);
    CHECK(report.delivered == rp.events);
    if (rp.reload)
      CHECK(reloads > 0);
    CHECK(st.peak_active_lanes <= max_cap);
    if (max_window != unbounded)
      CHECK(st.peak_sink_buffered <= max_window);
    if (rp.overflow == overflow_policy::block)
      CHECK(rejected == 0);
    CHECK(st.ok + st.skipped + st.failed == rp.events);
  }
  // Invariant 1: per-key order and one event of a key at a time.
  CHECK(obs.overlap == 0);
  CHECK(obs.out_of_order == 0);
  CHECK(obs.double_active == 0);
  CHECK(obs.invocations == rp.events);
  CHECK(log.key_order_breaks == 0);
  CHECK(log.global_breaks == 0);
  // Invariant 3: never more handler instances (lanes) than the cap.
  CHECK(obs.peak_handlers <= static_cast<int64_t>(max_cap));
  CHECK(obs.live_handlers == 0);
  // Invariant 2: every accepted event came out exactly once, as decided.
  uint64_t twice = 0, missing = 0, wrong = 0;
  for (size_t s = 0; s < rp.events; ++s) {
    if (log.seen[s] == 0) {
      ++missing;
      continue;
    }
    if (log.seen[s] > 1)
      ++twice;
    auto& p = log.payloads[s];
    auto want = p.what == fate::ok     ? outcome::ok
                : p.what == fate::skip ? outcome::skipped
                                       : outcome::failed;
    if (log.status[s] != want
        || (want == outcome::ok && log.result[s] != expected_result(p)))
      ++wrong;
  }
  CHECK(missing == 0);
  CHECK(twice == 0);
  CHECK(wrong == 0);
  CHECK(log.count == rp.events);
}

} // namespace

TEST_CASE("per-key order, exactly-once accounting, cap and window hold on "
          "adversarial workloads",
          "[invariants][property]") {
  auto seed = test_seed();
  auto live_before = payload::live.load();
  for (size_t cap : {1, 8, 64}) {
    for (size_t window : {size_t{1}, size_t{64}, unbounded}) {
      run_params rp;
      rp.cap = cap;
      rp.window = window;
      // Every combination of order, overflow and output path is covered
      // across the nine runs.
      auto i = (cap == 1 ? 0 : cap == 8 ? 1 : 2) + (window == 1 ? 0 : window == 64 ? 1 : 2);
      rp.order = i % 3 == 0 ? order_mode::global
                 : i % 3 == 1 ? order_mode::per_key
                              : order_mode::none;
      rp.overflow = cap == 8 ? overflow_policy::reject : overflow_policy::block;
      rp.callback = window != 64;
      if (window == 1)
        rp.events = 4000; // fully serialised: keep the run short
      run_property(rp, seed++);
    }
  }
  // No payload leaked or was destroyed twice (that aborts).
  CHECK(payload::live.load() == live_before);
}

TEST_CASE("reloading the cap and the window under load loses, duplicates "
          "and reorders nothing",
          "[invariants][property][reload]") {
  auto seed = test_seed();
  auto live_before = payload::live.load();
  for (auto order : {order_mode::global, order_mode::per_key}) {
    run_params rp;
    rp.reload = true;
    rp.cap = 8;
    rp.window = 64;
    rp.order = order;
    rp.events = 10000;
    run_property(rp, seed++);
  }
  CHECK(payload::live.load() == live_before);
}

TEST_CASE("global order holds with every window when all events of a key "
          "come from one producer",
          "[invariants][property][order]") {
  auto seed = test_seed();
  run_params rp;
  rp.producers = 1;
  rp.cap = 8;
  rp.window = 64;
  rp.order = order_mode::global;
  run_property(rp, seed);
}

TEST_CASE("a retiring lane never loses or reorders an event that arrives "
          "meanwhile",
          "[lane][race]") {
  auto seed = test_seed();
  INFO("seed " << seed);
  // One producer feeds a few keys one event at a time, each as soon as the
  // previous came out: every event meets a lane that just went idle, is
  // retiring, or has retired, which is the race the handshake must win.
  observer obs{4, 1};
  settings cfg;
  cfg.max_active_keys = 2;
  cfg.window = 2;
  cfg.threads = 2;
  cfg.order = order_mode::global;
  handler_factory make = [&obs](const handler_params&) {
    return std::make_unique<checking_handler>(&obs);
  };
  auto started = rt_type::start(cfg, make);
  REQUIRE(started);
  auto& rt = **started;
  std::mt19937_64 rng{seed};
  constexpr size_t n = 6000;
  uint64_t next_out = 0, bad = 0;
  std::vector<uint64_t> index_of_key(4, 0);
  std::unique_ptr<ev_type> e;
  for (size_t i = 0; i < n; ++i) {
    payload p;
    p.key_id = static_cast<uint32_t>(rng() % 4);
    p.index = i;
    p.latency_us = rng() % 4 == 0 ? 1 : 0;
    auto res = rt.submit(key{uint64_t{p.key_id}}, std::move(p));
    REQUIRE(res);
    // Keep at most two in flight, so lanes run dry all the time.
    while (res.seq() + 1 - next_out >= 2) {
      REQUIRE(rt.pull(e, std::chrono::seconds(30)));
      if (e->seq != next_out || e->status != outcome::ok)
        ++bad;
      ++next_out;
    }
  }
  while (next_out < n) {
    REQUIRE(rt.pull(e, std::chrono::seconds(30)));
    if (e->seq != next_out || e->status != outcome::ok)
      ++bad;
    ++next_out;
  }
  // Lanes retire once idle: wait (bounded) until all did.
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (rt.stats().active_lanes != 0
         && std::chrono::steady_clock::now() < deadline)
    std::this_thread::yield();
  auto st = rt.stats();
  auto report = rt.stop();
  INFO("lanes retired: " << st.lanes_retired);
  CHECK(bad == 0);
  CHECK(report.unfinished.empty());
  CHECK(obs.out_of_order == 0);
  CHECK(obs.overlap == 0);
  CHECK(obs.double_active == 0);
  CHECK(obs.peak_handlers <= 2);
  CHECK(st.active_lanes == 0);
  CHECK(st.lanes_spawned == st.lanes_retired);
  CHECK(st.lanes_retired > 0);
}
