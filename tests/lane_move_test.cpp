// SPDX-License-Identifier: Apache-2.0
// An idle lane belongs to no core: a shard that holds far more unfinished
// events than another hands it the lanes that run dry, each with its
// handler instance, and the key's order holds across the move.

#include "runtime_support.hpp"

#include <map>
#include <set>

using namespace runtime_support;

namespace {

void spin(std::chrono::microseconds d) {
  auto until = clk::now() + d;
  while (clk::now() < until) {
  }
}

// Answers each event with how many its instance has seen: a key served by
// one instance from start to end gets 1, 2, 3, ... in order.
struct counting : kl::handler<int, int> {
  counting(std::mutex& mtx, std::map<int, std::set<void*>>& hosts)
    : mtx_(mtx), hosts_(hosts) {}
  void on_event(int& v, kl::completion<int> done) override {
    {
      std::lock_guard<std::mutex> guard{mtx_};
      hosts_[v].insert(self());
    }
    spin(std::chrono::microseconds(v == 0 ? 20 : 2));
    done.ok(++seen_);
  }
  std::mutex& mtx_;
  std::map<int, std::set<void*>>& hosts_;
  int seen_ = 0;
};

// Key 0 gets ten times the work of a cold key and a backlog: its shard
// falls behind with the cold lanes it started with, the other runs dry.
// The cold keys come in waves, each after the last one was delivered, so
// between waves no event of theirs is on its way and their lanes may move.
struct hot_and_cold {
  static constexpr int cold_keys = 200;
  static constexpr int waves = 40;
  static constexpr int hot_per_wave = 500;

  std::mutex mtx;
  std::map<int, std::set<void*>> hosts; // key: the shards that ran it
  std::map<int, std::vector<int>> results;
  size_t delivered = 0;
  size_t not_ok = 0;
  size_t hot_delivered = 0;
  kl::stats st;

  void run(bool move) {
    auto s = two_threads();
    s.order = kl::order_mode::per_key;
    s.max_active_keys = 100000; // every key resident: nothing retires
    s.lane_linger_ms = 600000;
    s.window = kl::unbounded;
    s.key_backlog = kl::unbounded;
    s.move_idle_lanes = move;
    auto rt = start<int_rt>(
      s,
      [&](const kl::handler_params&) {
        return std::make_unique<counting>(mtx, hosts);
      },
      [&](int_rt::event_type& ev) {
        std::lock_guard<std::mutex> guard{mtx};
        if (ev.status != kl::outcome::ok)
          ++not_ok;
        results[ev.payload].push_back(ev.result.value_or(-1));
        ++delivered;
        hot_delivered += ev.payload == 0 ? 1 : 0;
      });
    for (int w = 0; w < waves; ++w) {
      // Cold first: in the first wave every shard's load is still zero, so
      // the cold lanes start spread over both shards (by lane count), and
      // some start on the hot key's, whatever the threads' timing.
      for (int k = 1; k <= cold_keys; ++k)
        REQUIRE(rt->submit(kl::key{uint64_t(k)}, k));
      for (int i = 0; i < hot_per_wave; ++i)
        REQUIRE(rt->submit(kl::key{uint64_t{0}}, 0));
      auto cold_done = size_t(w + 1) * cold_keys;
      REQUIRE(eventually([&] {
        std::lock_guard<std::mutex> guard{mtx};
        return delivered - hot_delivered >= cold_done;
      }, 60s));
    }
    REQUIRE(rt->drain(120s));
    st = rt->stats();
    std::lock_guard<std::mutex> guard{mtx};
    auto total = size_t{waves} * (hot_per_wave + cold_keys);
    CHECK(delivered == total);
    CHECK(hot_delivered == size_t{waves} * hot_per_wave);
    CHECK(not_ok == 0);
    CHECK(st.ok == total);
    // One instance per key, start to end, in order: a moved lane took its
    // handler with it and ran the key's events after the move in sequence.
    for (auto& [k, got] : results) {
      INFO("key " << k);
      std::vector<int> want(got.size());
      for (size_t i = 0; i < want.size(); ++i)
        want[i] = int(i) + 1;
      CHECK(got == want);
    }
    CHECK(results.size() == size_t{cold_keys + 1});
    CHECK(st.lanes_spawned == uint64_t{cold_keys + 1});
  }

  // Keys whose handler saw two shards through self().
  size_t keys_on_two_shards() {
    std::lock_guard<std::mutex> guard{mtx};
    size_t n = 0;
    for (auto& [k, shards] : hosts)
      n += shards.size() > 1 ? 1 : 0;
    return n;
  }
};

} // namespace

TEST_CASE("a busy shard hands its idle lanes to the other, handler and "
          "order intact",
          "[shard][move][order]") {
  hot_and_cold t;
  t.run(true);
  INFO("lanes moved: " << t.st.lanes_moved);
  CHECK(t.st.lanes_moved > 0);
  // A moved lane's handler reaches its new shard through self().
  auto moved_keys = t.keys_on_two_shards();
  CHECK(moved_keys > 0);
  CHECK(moved_keys <= t.st.lanes_moved);
}

TEST_CASE("with scheduler.move_idle_lanes = false a lane stays in the shard "
          "it started in",
          "[shard][move]") {
  hot_and_cold t;
  t.run(false);
  CHECK(t.st.lanes_moved == 0);
  CHECK(t.keys_on_two_shards() == 0);
}
