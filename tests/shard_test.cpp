// SPDX-License-Identifier: Apache-2.0
// Lanes live in shard actors: keys spread over the shards, lanes of one
// shard take turns, and a completion that outlives its lane is dropped.

#include "runtime_support.hpp"

#include <set>

using namespace runtime_support;

namespace {

using int_fn = fn_handler<int, int>;

void spin(std::chrono::microseconds d) {
  auto until = clk::now() + d;
  while (clk::now() < until) {
  }
}

} // namespace

TEST_CASE("within a shard, a hot key's backlog holds a cold key back by "
          "turns of lane_batch events, not by the whole backlog",
          "[shard][isolation]") {
  constexpr int hot_events = 20000;
  std::atomic<int> hot_done{0};
  std::atomic<int> hot_done_at_cold{-1};
  std::atomic<bool> all_routed{false};
  auto s = two_threads();
  s.shards = 1; // both keys in one shard
  s.lane_batch = 8;
  s.order = kl::order_mode::none;
  s.window = kl::unbounded;
  s.key_backlog = kl::unbounded;
  auto rt = start<int_rt>(s, from_fn<int, int>([&](int_fn&, int& v,
                                                   kl::completion<int> done) {
    if (v == 0) {
      // Holds the shard until every event was submitted (into the shard's
      // inbox), so the whole hot backlog is queued ahead of the cold key's
      // start, however fast or slow the producer is.
      while (!all_routed.load())
        std::this_thread::yield();
    }
    if (v < 0) {
      hot_done_at_cold = hot_done.load();
    } else {
      spin(std::chrono::microseconds(5));
      ++hot_done;
    }
    done.ok(v);
  }), [](int_rt::event_type&) {});
  for (int i = 0; i < hot_events; ++i)
    REQUIRE(rt->submit(kl::key{uint64_t{1}}, int{i}));
  REQUIRE(rt->submit(kl::key{uint64_t{2}}, -1));
  // Both keys' lanes started at submit: nothing waits for a slot.
  CHECK(rt->stats().waiting_keys == 0);
  all_routed = true;
  REQUIRE(rt->drain(120s));
  INFO("hot events run before the cold one: " << hot_done_at_cold.load());
  REQUIRE(hot_done_at_cold >= 0);
  // Without turns the cold key would wait for every hot event queued
  // ahead of its start: all 20,000 of them.
  CHECK(hot_done_at_cold < hot_events / 2);
  CHECK(hot_done == hot_events);
}

TEST_CASE("keys spread over every shard, and a handler's self() is the "
          "shard its lane lives in",
          "[shard]") {
  constexpr int keys = 30;
  std::mutex mtx;
  std::map<caf::event_based_actor*, int> lanes_per_shard;
  auto s = two_threads();
  s.shards = 3;
  s.max_active_keys = keys;
  s.order = kl::order_mode::none;
  auto rt = start<int_rt>(s, from_fn<int, int>([&](int_fn& h, int& v,
                                                   kl::completion<int> done) {
    {
      std::lock_guard<std::mutex> guard{mtx};
      ++lanes_per_shard[h.self()];
    }
    // Held open, so every key's lane is alive at once.
    auto shared = std::make_shared<kl::completion<int>>(std::move(done));
    h.run_later(std::chrono::milliseconds(50), [shared, v] { shared->ok(v); });
  }), [](int_rt::event_type&) {});
  for (int k = 0; k < keys; ++k)
    REQUIRE(rt->submit(kl::key{uint64_t(k)}, int{k}));
  REQUIRE(rt->drain(30s));
  CHECK(rt->stats().ok == keys);
  std::lock_guard<std::mutex> guard{mtx};
  REQUIRE(lanes_per_shard.size() == 3);
  for (auto& [shard, n] : lanes_per_shard) {
    INFO("lanes in one shard: " << n);
    CHECK(n >= 5); // the fewest-lanes pick spreads them
  }
}

TEST_CASE("a completion finished from another thread after its lane timed "
          "out and retired is dropped, and the key's next activation is "
          "unaffected",
          "[shard][completion]") {
  std::mutex mtx;
  std::vector<kl::completion<int>> kept;
  auto s = two_threads();
  s.attempt_timeout_ms = 20;
  s.lane_linger_ms = 0; // retire at once
  s.order = kl::order_mode::none;
  auto rt = start<int_rt>(s, from_fn<int, int>([&](int_fn&, int& v,
                                                   kl::completion<int> done) {
    if (v == 0) {
      std::lock_guard<std::mutex> guard{mtx};
      kept.push_back(std::move(done)); // never finished in time
      return;
    }
    done.ok(v);
  }));
  REQUIRE(rt->submit(kl::key{uint64_t{7}}, 0));
  std::unique_ptr<int_rt::event_type> out;
  REQUIRE(rt->pull(out, 10s));
  CHECK(out->status == kl::outcome::failed);
  CHECK(out->error.find("timed out") != std::string::npos);
  REQUIRE(eventually([&] { return rt->stats().active_lanes == 0; }));
  {
    // Its lane is gone (and its memory with it): the late result must go
    // by message and be dropped there.
    std::lock_guard<std::mutex> guard{mtx};
    REQUIRE(kept.size() == 1);
    kept.front().ok(99);
  }
  REQUIRE(rt->submit(kl::key{uint64_t{7}}, 5));
  REQUIRE(rt->pull(out, 10s));
  CHECK(out->status == kl::outcome::ok);
  REQUIRE(out->result);
  CHECK(*out->result == 5);
  CHECK(!rt->try_pull(out)); // no second output for the timed-out event
  auto st = rt->stats();
  CHECK(st.delivered == 2);
  CHECK(st.lanes_spawned == 2);
}
