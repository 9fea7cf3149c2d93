// SPDX-License-Identifier: Apache-2.0
// Keys that message keys: tell, ask and tell_after from handlers, and
// hold/release.

#include <algorithm>

#include "messaging_support.hpp"

using namespace runtime_support;
using namespace messaging_support;

TEST_CASE("a tell reaches its key after the sender's event ended, in the order sent",
          "[messaging][tell]") {
  fault_check faults;
  // "a" tells "b" three notes per event; "b" records them.
  journal log;
  auto rt = launch(messaging_settings(), script([&](script_handler& h, note& n,
                                                        kl::completion<int> done) {
    if (h.current_key() == kl::key{"a"}) {
      for (int i = 0; i < 3; ++i)
        expect_none(h.tell("b", note{0, 0, "a", n.id, i}));
    } else {
      log.add(h.current_key(), n);
    }
    done.ok(1);
  }));
  for (uint64_t id = 1; id <= 50; ++id)
    REQUIRE(rt->submit("a", note{id}));
  REQUIRE(rt->drain(20s));
  auto got = log.of("b");
  REQUIRE(got.size() == 150);
  for (size_t j = 0; j < got.size(); ++j) {
    CHECK(got[j].origin == j / 3 + 1);
    CHECK(got[j].index == int(j % 3));
  }
  auto st = rt->stats();
  CHECK(st.messages_sent == 150);
  CHECK(st.messages_in_flight == 0);
  CHECK(st.accepted == 200);
}

TEST_CASE("a failed attempt's tells are dropped and its retry sends its own once",
          "[messaging][tell][retry]") {
  fault_check faults;
  journal log;
  std::atomic<int> attempts{0};
  auto s = messaging_settings();
  s.max_attempts = 3;
  s.initial_backoff_ms = 1;
  auto rt = launch(s, script([&](script_handler& h, note& n,
                                         kl::completion<int> done) {
    if (h.current_key() != kl::key{"a"}) {
      log.add(h.current_key(), n);
      return done.ok(0);
    }
    expect_none(h.tell("b", note{0, 0, "a", n.id, 0}));
    expect_none(h.tell("c", note{0, 0, "a", n.id, 1}));
    if (++attempts <= 2)
      return done.fail("not yet"); // after telling: both must be dropped
    done.ok(1);
  }));
  REQUIRE(rt->submit("a", note{7}));
  REQUIRE(rt->drain(20s));
  CHECK(attempts == 3);
  CHECK(log.of("b").size() == 1);
  CHECK(log.of("c").size() == 1);
  CHECK(rt->stats().messages_sent == 2);
  CHECK(rt->stats().messages_in_flight == 0);
}

TEST_CASE("tells past messaging.max_in_flight are refused with messages_full, never waited for",
          "[messaging][tell][bound]") {
  fault_check faults;
  auto s = messaging_settings();
  s.messaging_max_in_flight = 2;
  std::vector<kl::errc> codes;
  auto rt = launch(s, script([&](script_handler& h, note& n,
                                         kl::completion<int> done) {
    if (h.current_key() == kl::key{"a"})
      for (int i = 0; i < 3; ++i)
        codes.push_back(h.tell("b", note{0, 0, "a", n.id, i}));
    done.ok(0);
  }));
  REQUIRE(rt->submit("a", note{1}));
  REQUIRE(rt->drain(20s));
  REQUIRE(codes.size() == 3);
  CHECK(codes[0] == kl::errc::none);
  CHECK(codes[1] == kl::errc::none);
  CHECK(codes[2] == kl::errc::messages_full);
  auto st = rt->stats();
  CHECK(st.messages_refused == 1);
  CHECK(st.messages_sent == 2);
  CHECK(st.messages_in_flight == 0);
}

TEST_CASE("an ask finishes the asker's event from the target's result",
          "[messaging][ask]") {
  fault_check faults;
  outputs out;
  auto rt = launch(messaging_settings(), script([&](script_handler& h, note& n,
                                                        kl::completion<int> done) {
    if (h.current_key() == kl::key{"price"})
      return done.ok(int(n.id) * 10);
    auto code = h.ask("price", note{n.id}, 5s,
                      [d = std::move(done)](caf::expected<int> r) mutable {
                        if (r)
                          d.ok(*r + 1);
                        else
                          d.fail(kl::render(r.error()));
                      });
    expect_none(code);
  }), &out);
  for (uint64_t id = 1; id <= 20; ++id)
    REQUIRE(rt->submit("buyer" + std::to_string(id % 3), note{id}));
  REQUIRE(rt->drain(20s));
  auto res = out.results_of_prefix("buyer");
  REQUIRE(res.size() == 20);
  for (auto& [id, r] : res)
    CHECK(r == int(id) * 10 + 1);
  CHECK(rt->stats().asks == 20);
  CHECK(rt->stats().ask_timeouts == 0);
  CHECK(out.count_of("price") == 20); // the asked events are outputs too
}

TEST_CASE("an ask to a key whose event fails answers ask_failed with the reason",
          "[messaging][ask]") {
  fault_check faults;
  std::string seen;
  auto rt = launch(messaging_settings(), script([&](script_handler& h, note&,
                                                        kl::completion<int> done) {
    if (h.current_key() == kl::key{"broken"})
      return done.fail("no such account");
    expect_none(h.ask("broken", note{1}, 5s,
                  [&seen, d = std::move(done)](caf::expected<int> r) mutable {
                    if (r)
                      fault("an ask to a failing key answered a value");
                    seen = kl::render(r.error());
                    d.skip();
                  }));
  }));
  REQUIRE(rt->submit("asker", note{1}));
  REQUIRE(rt->drain(20s));
  CHECK_THAT(seen, Catch::Contains("ask_failed")
                     && Catch::Contains("no such account"));
}

TEST_CASE("two keys that ask each other end in ask_timeout, and nothing stays stuck",
          "[messaging][ask][cycle]") {
  fault_check faults;
  cycle_result r = run_ask_cycle({"a", "b"});
  CHECK(r.timeouts >= 1);
  CHECK(r.drained);
  CHECK(r.in_flight == 0);
  CHECK_THAT(r.first_error, Catch::Contains("ask_timeout"));
}

TEST_CASE("a cycle of asks a -> b -> c -> a ends in ask_timeout, and nothing stays stuck",
          "[messaging][ask][cycle]") {
  fault_check faults;
  cycle_result r = run_ask_cycle({"a", "b", "c"});
  CHECK(r.timeouts >= 1);
  CHECK(r.drained);
  CHECK(r.in_flight == 0);
  CHECK_THAT(r.first_error, Catch::Contains("ask_timeout"));
}

TEST_CASE("a tell_after timer fires once, after its delay, and starts a key without a lane",
          "[messaging][timer]") {
  fault_check faults;
  journal log;
  auto s = messaging_settings();
  s.lane_linger_ms = 0; // the target's lane is surely gone in between
  auto t0 = clk::now();
  std::atomic<int64_t> fired_after_ms{-1};
  auto rt = launch(s, script([&](script_handler& h, note& n,
                                         kl::completion<int> done) {
    if (h.current_key() == kl::key{"room"}) {
      kl::timer_id id = 0;
      expect_none(h.tell_after(50ms, "tick", note{n.id + 1}, id));
      CHECK(id != 0);
    } else {
      fired_after_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                         clk::now() - t0)
                         .count();
      log.add(h.current_key(), n);
    }
    done.ok(0);
  }));
  REQUIRE(rt->submit("room", note{1}));
  REQUIRE(eventually([&] { return log.of("tick").size() == 1; }));
  REQUIRE(rt->drain(20s));
  CHECK(fired_after_ms >= 50);
  std::this_thread::sleep_for(100ms);
  CHECK(log.of("tick").size() == 1);
  auto st = rt->stats();
  CHECK(st.timers_fired == 1);
  CHECK(st.timers_pending == 0);
}

TEST_CASE("a cancelled timer never fires, and a failed attempt's timer is never armed",
          "[messaging][timer]") {
  fault_check faults;
  journal log;
  std::atomic<int> attempts{0};
  auto s = messaging_settings();
  s.max_attempts = 2;
  s.initial_backoff_ms = 1;
  std::atomic<bool> cancelled{false};
  auto rt = launch(s, script([&](script_handler& h, note& n,
                                         kl::completion<int> done) {
    if (h.current_key() == kl::key{"t"}) {
      log.add(h.current_key(), n);
      return done.ok(0);
    }
    kl::timer_id a = 0, b = 0;
    expect_none(h.tell_after(30ms, "t", note{100 + n.id}, a));
    expect_none(h.tell_after(30ms, "t", note{200 + n.id}, b));
    if (n.id == 1) {
      cancelled = h.cancel_timer(a); // inside the attempt that set it
      return done.ok(0);
    }
    if (++attempts == 1)
      return done.fail("first attempt fails: its timers go with it");
    done.ok(0);
  }));
  REQUIRE(rt->submit("s", note{1}));
  REQUIRE(rt->submit("s", note{2}));
  REQUIRE(eventually([&] { return log.of("t").size() >= 3; }));
  std::this_thread::sleep_for(100ms);
  REQUIRE(rt->drain(20s));
  CHECK(cancelled);
  std::multiset<uint64_t> ids;
  for (auto& x : log.of("t"))
    ids.insert(x.id);
  CHECK(ids == std::multiset<uint64_t>{201, 102, 202});
  auto st = rt->stats();
  CHECK(st.timers_fired == 3);
  CHECK(st.timers_cancelled == 1);
  CHECK(st.timers_pending == 0);
}

TEST_CASE("a tell to a parked key parks behind its events, in order",
          "[messaging][tell][park]") {
  fault_check faults;
  auto s = messaging_settings();
  s.park = kl::park_mode::memory;
  auto rt = launch(s, script([&](script_handler& h, note& n,
                                         kl::completion<int> done) {
    if (h.current_key() == kl::key{"acct"})
      return done.fail_permanently("frozen");
    expect_none(h.tell("acct", note{n.id * 10}));
    expect_none(h.tell("acct", note{n.id * 10 + 1}));
    done.ok(0);
  }));
  REQUIRE(rt->submit("acct", note{1})); // parks the key
  REQUIRE(rt->submit("bank", note{2}));
  REQUIRE(rt->drain(20s));
  auto parked = rt->parked_events("acct");
  REQUIRE(parked);
  std::vector<uint64_t> ids;
  for (auto& p : *parked)
    ids.push_back(p.payload.id);
  CHECK(ids == std::vector<uint64_t>{1, 20, 21});
  CHECK(rt->stats().messages_in_flight == 0);
}

TEST_CASE("a held lane outlives its linger until its handler releases it",
          "[messaging][hold]") {
  fault_check faults;
  auto s = messaging_settings();
  s.lane_linger_ms = 0;
  auto rt = launch(s, script([&](script_handler& h, note& n,
                                         kl::completion<int> done) {
    if (n.id == 1)
      h.hold();
    else
      h.release();
    done.ok(0);
  }));
  REQUIRE(rt->submit("room", note{1}));
  REQUIRE(rt->drain(20s));
  std::this_thread::sleep_for(50ms);
  CHECK(rt->stats().active_lanes == 1);
  CHECK(rt->stats().lanes_retired == 0);
  REQUIRE(rt->submit("room", note{2}));
  REQUIRE(rt->drain(20s));
  CHECK(eventually([&] { return rt->stats().active_lanes == 0; }));
  CHECK(rt->stats().lanes_spawned == 1); // the same lane ran both
}

TEST_CASE("a key's own turn budget lets it run more events in a turn than lane_batch",
          "[messaging][budget]") {
  // One shard on one thread, held by a gate event while "hot" gets 40
  // events and then "cold" one: with lane_batch 4, cold would run after
  // hot's first 4; hot asked for 100 per turn, so cold runs after all 40.
  for (bool own_budget : {false, true}) {
    fault_check faults;
    auto s = messaging_settings();
    s.threads = 1;
    s.shards = 1;
    s.lane_batch = 4;
    std::mutex mtx;
    std::condition_variable cv;
    bool open = false, gate_in = false;
    std::vector<std::string> ran;
    struct budget_handler : script_handler {
      budget_handler(fn_type f, bool own) : script_handler(std::move(f)), own_(own) {}
      void on_activate(const kl::key& k) override {
        if (own_ && k == kl::key{"hot"})
          set_turn_budget(100);
      }
      bool own_;
    };
    auto fn = [&](script_handler& h, note&, kl::completion<int> done) {
      std::unique_lock<std::mutex> lock{mtx};
      if (h.current_key() == kl::key{"gate"}) {
        gate_in = true;
        cv.notify_all();
        cv.wait(lock, [&] { return open; }); // holds the only thread
      } else {
        ran.push_back(h.current_key().to_string());
      }
      lock.unlock();
      done.ok(0);
    };
    auto rt = start<note_rt>(
      s,
      [fn, own_budget](const kl::handler_params&) {
        return std::make_unique<budget_handler>(fn, own_budget);
      },
      [](note_rt::event_type&) {});
    REQUIRE(rt->submit("gate", note{1}));
    {
      std::unique_lock<std::mutex> lock{mtx};
      REQUIRE(cv.wait_for(lock, 10s, [&] { return gate_in; }));
    }
    for (uint64_t i = 0; i < 40; ++i)
      REQUIRE(rt->submit("hot", note{i}));
    REQUIRE(rt->submit("cold", note{99}));
    {
      std::lock_guard<std::mutex> lock{mtx};
      open = true;
    }
    cv.notify_all();
    REQUIRE(rt->drain(20s));
    std::lock_guard<std::mutex> lock{mtx};
    REQUIRE(ran.size() == 41);
    auto cold_at = std::find(ran.begin(), ran.end(), "cold") - ran.begin();
    INFO("own budget " << own_budget);
    if (own_budget)
      CHECK(cold_at == 40);
    else
      CHECK(cold_at < 40);
  }
}
