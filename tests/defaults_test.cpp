// SPDX-License-Identifier: Apache-2.0
// The defaults a trading or game server gets without a config file (0.2.0,
// docs/config.md "Defaults, and why"): each test starts from settings{}
// and shows what the default does, not only its value.

#include <catch2/catch.hpp>

#include <atomic>
#include <condition_variable>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "keylane/config.hpp"
#include "keylane/config_loader.hpp"
#include "keylane/reload.hpp"
#include "keylane/runtime.hpp"
#include "runtime_support.hpp"

using namespace runtime_support;

namespace {

// settings{} with only what a test needs to run here: two workers and the
// handler's name. Everything else is the default under test.
kl::settings defaults_on_two_threads() {
  kl::settings s;
  s.threads = 2;
  s.handler = "test";
  return s;
}

// Holds the completions of one key until `open()`.
class gate {
public:
  void hold(kl::completion<int> done) {
    std::lock_guard<std::mutex> guard{mtx_};
    if (open_)
      return done.ok(0);
    held_.push_back(std::move(done));
  }
  void open() {
    std::vector<kl::completion<int>> held;
    {
      std::lock_guard<std::mutex> guard{mtx_};
      open_ = true;
      held.swap(held_);
    }
    for (auto& d : held)
      d.ok(0);
  }

private:
  std::mutex mtx_;
  bool open_ = false;
  std::vector<kl::completion<int>> held_;
};

} // namespace

TEST_CASE("the defaults are per_key order, a key backlog of a sixteenth of "
          "the window, three attempts and 16 metrics threads",
          "[config][defaults]") {
  kl::settings s;
  CHECK(s.order == kl::order_mode::per_key);
  CHECK(s.key_backlog == 4096);
  CHECK(s.window == 65536);
  CHECK(s.key_backlog * 16 == s.window);
  CHECK(s.max_attempts == 3);
  CHECK(s.park == kl::park_mode::memory);
  CHECK(s.metrics_threads == 16);
  // An empty file gives the same: the file's defaults are the struct's.
  auto parsed = kl::parse("", "empty.toml");
  REQUIRE(parsed);
  CHECK(parsed->order == kl::order_mode::per_key);
  CHECK(parsed->key_backlog == 4096);
  CHECK(parsed->max_attempts == 3);
  CHECK(parsed->metrics_threads == 16);
}

TEST_CASE("under the default order a slow key holds back no other key's "
          "output", "[config][defaults][isolation]") {
  gate slow;
  std::mutex mtx;
  std::condition_variable cv;
  std::map<std::string, int> delivered;
  auto rt = start<int_rt>(
    defaults_on_two_threads(),
    from_fn<int, int>([&](auto& h, int& v, kl::completion<int> done) {
      if (h.current_key().to_string() == "slow")
        return slow.hold(std::move(done));
      done.ok(v);
    }),
    [&](int_rt::event_type& e) {
      std::lock_guard<std::mutex> guard{mtx};
      ++delivered[e.key().to_string()];
      cv.notify_all();
    });
  at_exit opener{[&] { slow.open(); }};
  REQUIRE(rt->submit("slow", 1));
  for (int i = 0; i < 200; ++i)
    REQUIRE(rt->submit("cold-" + std::to_string(i % 20), i));
  {
    // Under order = "global" none of these would come out before "slow"'s
    // event, submitted first, is done.
    std::unique_lock<std::mutex> lock{mtx};
    auto all_cold = [&] {
      int n = 0;
      for (auto& [k, c] : delivered)
        if (k != "slow")
          n += c;
      return n == 200;
    };
    REQUIRE(cv.wait_for(lock, 10s, all_cold));
    CHECK(delivered.count("slow") == 0);
  }
  slow.open();
  REQUIRE(rt->drain(10s));
  std::lock_guard<std::mutex> guard{mtx};
  CHECK(delivered["slow"] == 1);
}

TEST_CASE("the default key backlog stops one hot key at 4,096 while other "
          "keys still get in", "[config][defaults][backlog]") {
  gate hot;
  auto cfg = defaults_on_two_threads();
  cfg.overflow = kl::overflow_policy::reject; // to see the limit, not wait
  auto rt = start<int_rt>(
    cfg,
    from_fn<int, int>([&](auto& h, int& v, kl::completion<int> done) {
      if (h.current_key().to_string() == "hot")
        return hot.hold(std::move(done));
      done.ok(v);
    }),
    [](int_rt::event_type&) {});
  at_exit opener{[&] { hot.open(); }};
  size_t accepted = 0;
  kl::errc refused = kl::errc::none;
  for (size_t i = 0; i < 65536 && refused == kl::errc::none; ++i) {
    auto r = rt->submit("hot", int(i));
    if (r)
      ++accepted;
    else
      refused = r.code();
  }
  // Nothing of "hot" completed, so none of its count came back: the limit
  // is exact here (counted back in groups, it may bite up to 63 early).
  CHECK(refused == kl::errc::key_backlog_full);
  CHECK(accepted == 4096);
  // The window (65,536) still has room for every other key.
  for (int i = 0; i < 100; ++i)
    CHECK(rt->submit("cold-" + std::to_string(i), i));
  hot.open();
  REQUIRE(rt->drain(30s));
}

TEST_CASE("with the default retry a failing event is tried three times "
          "before its key parks, and a brief fault parks nothing",
          "[config][defaults][retry]") {
  std::mutex mtx;
  std::map<std::string, int> calls;
  std::vector<std::pair<kl::outcome, uint32_t>> outs;
  auto rt = start<int_rt>(
    defaults_on_two_threads(),
    from_fn<int, int>([&](auto& h, int& v, kl::completion<int> done) {
      int n;
      {
        std::lock_guard<std::mutex> guard{mtx};
        n = ++calls[h.current_key().to_string()];
      }
      // "blip" fails twice, then succeeds; "down" always fails.
      if (h.current_key().to_string() == "down" || n <= 2)
        return done.fail("database unavailable");
      done.ok(v);
    }),
    [&](int_rt::event_type& e) {
      std::lock_guard<std::mutex> guard{mtx};
      outs.emplace_back(e.status, e.attempts);
    });
  REQUIRE(rt->submit("blip", 1));
  REQUIRE(rt->drain(10s));
  {
    std::lock_guard<std::mutex> guard{mtx};
    REQUIRE(outs.size() == 1);
    CHECK(outs[0].first == kl::outcome::ok);
    CHECK(outs[0].second == 3);
  }
  auto parked = rt->parked_keys();
  REQUIRE(parked);
  CHECK(parked->empty());

  REQUIRE(rt->submit("down", 1));
  REQUIRE(rt->drain(10s));
  std::lock_guard<std::mutex> guard{mtx};
  REQUIRE(outs.size() == 2);
  CHECK(outs[1].first == kl::outcome::parked);
  CHECK(outs[1].second == 3);
  CHECK(calls["down"] == 3);
  parked = rt->parked_keys();
  REQUIRE(parked);
  REQUIRE(parked->size() == 1);
  CHECK(parked->front().k.to_string() == "down");
}

TEST_CASE("the start-up line names where the settings came from and each "
          "one that differs from the defaults",
          "[config][defaults][log]") {
  kl::settings s;
  CHECK(kl::describe_non_defaults(s) == "settings (<defaults>): all defaults");
  auto p = kl::parse("[runtime]\nlane_linger_ms = 20\n[state]\nstore = "
                     "\"memory\"\n[handler]\nname = \"balance\"\n",
                     "app.toml");
  REQUIRE(p);
  CHECK(kl::describe_non_defaults(*p)
        == "settings (app.toml) differ from the defaults: "
           "runtime.lane_linger_ms = 20, state.store = \"memory\", "
           "handler.name = \"balance\"");
  // The old defaults, set explicitly, are named: they are no longer defaults.
  REQUIRE(!kl::apply_overrides(*p, {"runtime.order=global"}));
  CHECK(kl::describe_non_defaults(*p).find("runtime.order = \"global\"")
        != std::string::npos);
}
