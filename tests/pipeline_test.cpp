// SPDX-License-Identifier: Apache-2.0
#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <map>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

#include "keylane/pipeline.hpp"

#include "pipeline_support.hpp"
#include "property_support.hpp"

namespace kl = keylane;
namespace kt = keylane::test;
using namespace std::chrono_literals;

namespace {

kl::settings pipeline_settings(size_t window) {
  kl::settings s;
  s.order = kl::order_mode::global; // the default before 0.2.0
  s.max_attempts = 1; // the default before 0.2.0
  s.threads = 2;
  s.window = window;
  s.max_active_keys = 16;
  // Failures end as tombstones here; parking is covered on its own.
  s.park = kl::park_mode::none;
  s.log = kl::log_level::error;
  return s;
}

using two_stage = kl::pipeline<kt::order_in, uint64_t>;

struct seen {
  std::mutex mtx;
  std::vector<kl::pipeline_result<uint64_t>> out;
  std::atomic<int> concurrent{0};
  std::atomic<int> overlaps{0};
};

std::unique_ptr<two_stage> start_two_stage(kl::settings cfg,
                                           kl::stage_spec second,
                                           std::shared_ptr<seen> log) {
  auto p =
    kl::pipeline_builder<kt::order_in>{}
      .stage<kt::order_mid>({"enrich", kl::stage_kind::unordered, 8},
                            [] { return std::make_unique<kt::stage1_handler>(); })
      .stage<uint64_t>(second,
                       [] { return std::make_unique<kt::stage2_handler>(); })
      .start(cfg, [log](kl::pipeline_result<uint64_t>& r) {
        if (log->concurrent.fetch_add(1) != 0)
          ++log->overlaps;
        {
          std::lock_guard<std::mutex> guard{log->mtx};
          log->out.push_back(std::move(r));
        }
        --log->concurrent;
      });
  REQUIRE(p);
  return std::move(*p);
}

// Submits `work` from as many threads as it has producers; returns the
// pipeline sequence number each event got.
std::vector<uint64_t> submit_all(two_stage& p,
                                 const std::vector<kt::order_in>& work,
                                 size_t producers) {
  std::vector<uint64_t> seq_of(work.size());
  std::vector<std::thread> threads;
  for (size_t t = 0; t < producers; ++t)
    threads.emplace_back([&, t] {
      for (size_t i = t; i < work.size(); i += producers) {
        auto copy = work[i];
        auto r = p.submit(kl::key{uint64_t{copy.key_id}}, std::move(copy));
        REQUIRE(r.ok());
        seq_of[i] = r.seq();
      }
    });
  for (auto& t : threads)
    t.join();
  return seq_of;
}

} // namespace

TEST_CASE("a pipeline delivers every event exactly once, in submission order, "
          "through random latencies, skips, failures and throws",
          "[pipeline][property]") {
  auto seed = kt::test_seed();
  INFO("seed " << seed << " (rerun with KEYLANE_SEED=" << seed << ")");
  using kind = kl::stage_kind;
  using om = kl::order_mode;
  for (auto second : {kl::stage_spec{"price", kind::unordered, 8, om::none},
                      kl::stage_spec{"price", kind::keyed, 8, om::none},
                      kl::stage_spec{"price", kind::ordered, 8, om::none},
                      kl::stage_spec{"price", kind::ordered, 8, om::global},
                      kl::stage_spec{"price", kind::unordered, 8, om::global}}) {
    INFO("second stage " << kl::to_string(second.kind) << ", re-sequenced "
                         << kl::to_string(second.resequence));
    const size_t n = 4000, producers = 3, window = 96;
    auto work = kt::make_orders(seed++, n, 40, producers, 9);
    auto log = std::make_shared<seen>();
    auto p = start_two_stage(pipeline_settings(window), second, log);
    auto seq_of = submit_all(*p, work, producers);
    REQUIRE(p->drain(60s));
    auto st = p->stats();
    p->stop();
    REQUIRE(log->overlaps == 0);
    REQUIRE(log->out.size() == n);
    // Global order: sequence numbers 0..n-1, each once, ascending.
    for (size_t i = 0; i < n; ++i)
      REQUIRE(log->out[i].seq == i);
    std::map<uint64_t, size_t> index_of_seq;
    for (size_t i = 0; i < n; ++i)
      index_of_seq[seq_of[i]] = i;
    REQUIRE(index_of_seq.size() == n);
    // Each result is what the script says: a value from both stages, or
    // a tombstone from the stage that ended it.
    std::map<std::pair<uint32_t, uint32_t>, uint64_t> last_index;
    for (auto& r : log->out) {
      auto& x = work[index_of_seq.at(r.seq)];
      REQUIRE(r.key == kl::key{uint64_t{x.key_id}});
      auto first_bad = x.fate[0] != kt::step_fate::ok   ? 0
                       : x.fate[1] != kt::step_fate::ok ? 1
                                                        : 2;
      if (first_bad == 2) {
        REQUIRE(r.status == kl::outcome::ok);
        REQUIRE(r.result);
        kt::order_mid mid{x, kt::stage1_value(x)};
        REQUIRE(*r.result == kt::stage2_value(mid));
        REQUIRE(r.stage.empty());
      } else {
        REQUIRE_FALSE(r.result);
        REQUIRE(r.stage == (first_bad == 0 ? "enrich" : "price"));
        auto f = x.fate[first_bad];
        REQUIRE(r.status == (f == kt::step_fate::skip ? kl::outcome::skipped
                                                      : kl::outcome::failed));
      }
      // Each producer's events of one key in the order it submitted them.
      auto pk = std::make_pair(x.producer, x.key_id);
      auto it = last_index.find(pk);
      if (it != last_index.end())
        REQUIRE(it->second < x.index);
      last_index[pk] = x.index;
    }
    REQUIRE(st.accepted == n);
    REQUIRE(st.delivered == n);
    REQUIRE(st.peak_held <= window);
    REQUIRE(st.stages.size() == 2);
    REQUIRE(st.stages[0].entered == n);
    auto s0 = st.stages[0];
    REQUIRE(s0.ok + s0.skipped + s0.failed + s0.parked == n);
    auto s1 = st.stages[1];
    REQUIRE(s1.entered == s0.ok);
    REQUIRE(s1.ok + s1.skipped + s1.failed + s1.parked == s0.ok);
    // Only a stage with a re-sequencer holds anything.
    if (second.kind == kind::ordered || second.resequence != om::none)
      REQUIRE(s1.peak_held <= window);
    else
      REQUIRE(s1.peak_held == 0);
  }
}

TEST_CASE("an ordered stage behind an unordered one keeps a running total per "
          "account equal to a sequential run",
          "[pipeline][state]") {
  auto seed = kt::test_seed();
  INFO("seed " << seed << " (rerun with KEYLANE_SEED=" << seed << ")");
  const size_t n = 3000;
  auto work = kt::make_orders(seed, n, 25, 1, 6);
  auto store = std::make_shared<kt::ledger_store>();
  std::mutex mtx;
  std::map<uint64_t, kl::pipeline_result<int64_t>> by_seq;
  auto cfg = pipeline_settings(128);
  cfg.order = kl::order_mode::per_key;
  cfg.lane_linger_ms = 0; // retire often: totals cross lane lifetimes
  auto p =
    kl::pipeline_builder<kt::order_in>{}
      .stage<kt::order_mid>({"enrich", kl::stage_kind::unordered, 8},
                            [] { return std::make_unique<kt::stage1_handler>(); })
      .stage<int64_t>({"total", kl::stage_kind::ordered, 4},
                      [store] {
                        return std::make_unique<kt::total_handler>(store);
                      })
      .start(cfg, [&](kl::pipeline_result<int64_t>& r) {
        std::lock_guard<std::mutex> guard{mtx};
        REQUIRE(by_seq.emplace(r.seq, std::move(r)).second);
      });
  REQUIRE(p);
  for (auto x : work)
    REQUIRE((*p)->submit(kl::key{uint64_t{x.key_id}}, std::move(x)).ok());
  REQUIRE((*p)->drain(60s));
  (*p)->stop();
  REQUIRE(by_seq.size() == n);
  REQUIRE(store->overlaps == 0);
  // The sequential reference: one loop, in submission order.
  std::map<uint32_t, int64_t> total;
  size_t checked = 0;
  for (size_t i = 0; i < n; ++i) {
    auto& x = work[i];
    auto& r = by_seq.at(i);
    if (x.fate[0] != kt::step_fate::ok) {
      REQUIRE(r.status != kl::outcome::ok);
      continue;
    }
    total[x.key_id] += x.amount;
    REQUIRE(r.status == kl::outcome::ok);
    REQUIRE(*r.result == total[x.key_id]);
    ++checked;
  }
  REQUIRE(checked > n / 2);
}

TEST_CASE("with per-key output a straggler delays no other key's results",
          "[pipeline][isolation]") {
  std::mutex mtx;
  std::condition_variable cv;
  std::vector<kl::pipeline_result<int>> out;
  struct gated : kl::handler<int, int> {
    std::function<void(kl::completion<int>)> wait;
    void on_event(int& x, kl::completion<int> done) override {
      if (x == -1)
        wait(std::move(done));
      else
        done.ok(x * 2);
    }
  };
  auto pending = std::make_shared<std::vector<std::shared_ptr<kl::completion<int>>>>();
  auto cfg = pipeline_settings(1024);
  cfg.order = kl::order_mode::per_key;
  auto p = kl::pipeline_builder<int>{}
             .stage<int>({"only", kl::stage_kind::keyed, 8},
                         [&] {
                           auto h = std::make_unique<gated>();
                           h->wait = [&](kl::completion<int> d) {
                             std::lock_guard<std::mutex> guard{mtx};
                             pending->push_back(
                               std::make_shared<kl::completion<int>>(
                                 std::move(d)));
                             cv.notify_all();
                           };
                           return h;
                         })
             .start(cfg, [&](kl::pipeline_result<int>& r) {
               std::lock_guard<std::mutex> guard{mtx};
               out.push_back(std::move(r));
               cv.notify_all();
             });
  REQUIRE(p);
  REQUIRE((*p)->submit(kl::key{"slow"}, -1).ok());
  REQUIRE((*p)->submit(kl::key{"slow"}, 5).ok());
  for (int i = 0; i < 50; ++i)
    REQUIRE((*p)->submit(kl::key{"fast" + std::to_string(i % 5)}, i).ok());
  {
    std::unique_lock<std::mutex> guard{mtx};
    // Every other key's result arrives while the straggler still waits.
    REQUIRE(cv.wait_for(guard, 30s, [&] { return out.size() == 50; }));
    REQUIRE(pending->size() == 1);
    for (auto& r : out)
      REQUIRE(r.key != kl::key{"slow"});
  }
  // A completion may finish from any thread.
  pending->front()->ok(-2);
  std::unique_lock<std::mutex> guard{mtx};
  REQUIRE(cv.wait_for(guard, 30s, [&] { return out.size() == 52; }));
  REQUIRE(out[50].key == kl::key{"slow"});
  REQUIRE(*out[50].result == -2);
  REQUIRE(*out[51].result == 10);
  guard.unlock();
  (*p)->stop();
}

TEST_CASE("a full pipeline window rejects and leaves the input with the caller",
          "[pipeline][window]") {
  auto cfg = pipeline_settings(3);
  cfg.overflow = kl::overflow_policy::reject;
  std::mutex mtx;
  std::vector<std::shared_ptr<kl::completion<std::string>>> held;
  struct holder : kl::handler<std::string, std::string> {
    std::function<void(kl::completion<std::string>)> keep;
    void on_event(std::string&, kl::completion<std::string> d) override {
      keep(std::move(d));
    }
  };
  std::atomic<int> delivered{0};
  auto p = kl::pipeline_builder<std::string>{}
             .stage<std::string>({"hold", kl::stage_kind::unordered, 8},
                                 [&] {
                                   auto h = std::make_unique<holder>();
                                   h->keep = [&](kl::completion<std::string> d) {
                                     std::lock_guard<std::mutex> g{mtx};
                                     held.push_back(std::make_shared<
                                                    kl::completion<std::string>>(
                                       std::move(d)));
                                   };
                                   return h;
                                 })
             .start(cfg, [&](kl::pipeline_result<std::string>&) {
               ++delivered;
             });
  REQUIRE(p);
  for (int i = 0; i < 3; ++i)
    REQUIRE((*p)->submit(kl::key{"k"}, std::string{"x"}).ok());
  std::string extra = "kept by the caller";
  auto r = (*p)->submit(kl::key{"k"}, std::move(extra));
  REQUIRE_FALSE(r.ok());
  REQUIRE(r.code() == kl::errc::window_full);
  REQUIRE(extra == "kept by the caller");
  // The three held events are reported by stop, not lost silently.
  auto rep = (*p)->stop();
  REQUIRE(rep.accepted == 3);
  REQUIRE(rep.delivered == 0);
  REQUIRE(rep.unfinished.size() == 3);
  REQUIRE(delivered == 0);
}

TEST_CASE("a pipeline refuses settings it cannot run, saying what to change",
          "[pipeline][config]") {
  auto make = [] {
    struct echo : kl::handler<int, int> {
      void on_event(int& x, kl::completion<int> d) override { d.ok(x); }
    };
    return std::make_unique<echo>();
  };
  auto start = [&](kl::settings cfg) {
    return kl::pipeline_builder<int>{}
      .stage<int>({"a", kl::stage_kind::keyed}, make)
      .start(cfg, [](kl::pipeline_result<int>&) {});
  };
  auto cfg = pipeline_settings(8);
  cfg.window_auto = true;
  auto p = start(cfg);
  REQUIRE_FALSE(p);
  REQUIRE(kl::render(p.error()).find("runtime.window = \"auto\"")
          != std::string::npos);
  cfg = pipeline_settings(8);
  cfg.spill_path = "/tmp";
  p = start(cfg);
  REQUIRE_FALSE(p);
  REQUIRE(kl::render(p.error()).find("sink.spill_path") != std::string::npos);
  auto unnamed = kl::pipeline_builder<int>{}
                   .stage<int>({"", kl::stage_kind::keyed}, make)
                   .start(pipeline_settings(8), [](kl::pipeline_result<int>&) {});
  REQUIRE_FALSE(unnamed);
  REQUIRE(kl::render(unnamed.error()).find("name") != std::string::npos);
}

TEST_CASE("a stage that parks a key ends its events as parked tombstones and "
          "lets every other key through",
          "[pipeline][park]") {
  struct flaky : kl::handler<int, int> {
    void on_event(int& x, kl::completion<int> d) override {
      if (x < 0)
        d.fail_permanently("negative amount");
      else
        d.ok(x + 1);
    }
  };
  auto cfg = pipeline_settings(64);
  cfg.park = kl::park_mode::memory;
  cfg.order = kl::order_mode::none;
  std::mutex mtx;
  std::map<uint64_t, kl::pipeline_result<int>> out;
  auto p = kl::pipeline_builder<int>{}
             .stage<int>({"check", kl::stage_kind::keyed, 4},
                         [] { return std::make_unique<flaky>(); })
             .stage<int>({"double", kl::stage_kind::unordered, 4},
                         [] {
                           struct twice : kl::handler<int, int> {
                             void on_event(int& x, kl::completion<int> d) override {
                               d.ok(2 * x);
                             }
                           };
                           return std::make_unique<twice>();
                         })
             .start(cfg, [&](kl::pipeline_result<int>& r) {
               std::lock_guard<std::mutex> guard{mtx};
               REQUIRE(out.emplace(r.seq, std::move(r)).second);
             });
  REQUIRE(p);
  // "bad" parks at its second event; its later events park behind it.
  std::vector<std::pair<std::string, int>> in{
    {"bad", 1}, {"good", 1}, {"bad", -1}, {"good", 2}, {"bad", 3}, {"good", 3}};
  for (auto& [k, v] : in)
    REQUIRE((*p)->submit(kl::key{k}, v).ok());
  REQUIRE((*p)->drain(30s));
  auto st = (*p)->stats();
  (*p)->stop();
  REQUIRE(out.size() == in.size());
  for (uint64_t i = 0; i < in.size(); ++i) {
    auto& r = out.at(i);
    if (in[i].first == "bad" && i >= 2) {
      REQUIRE(r.status == kl::outcome::parked);
      REQUIRE(r.stage == "check");
      REQUIRE_FALSE(r.result);
    } else {
      REQUIRE(r.status == kl::outcome::ok);
      REQUIRE(*r.result == 2 * (in[i].second + 1));
    }
  }
  REQUIRE(st.stages[0].parked == 2);
  REQUIRE(st.stages[1].entered == 4);
  REQUIRE(st.peak_held == 0); // order "none" holds nothing back
}
