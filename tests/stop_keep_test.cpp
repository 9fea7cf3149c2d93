// SPDX-License-Identifier: Apache-2.0
// With a durable park store, `stop()` keeps what it ended unfinished: the
// next runtime on that store starts with those keys parked, in order.

#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include <keylane/runtime.hpp>

#include "temp_dir.hpp"

using namespace keylane;
using namespace std::chrono_literals;

namespace {

using rt_type = runtime<std::string, std::string>;

// Never finishes "hang" events; keeps their completions so none is dropped.
struct holding : handler<std::string, std::string> {
  explicit holding(std::atomic<int>* started) : started_(started) {}
  void on_event(std::string& x, completion<std::string> done) override {
    ++*started_;
    if (x.rfind("hang", 0) == 0) {
      held_.push_back(std::move(done));
      return;
    }
    done.ok(x + "!");
  }
  std::atomic<int>* started_;
  std::vector<completion<std::string>> held_;
};

settings durable(const std::string& path) {
  settings s;
  s.max_attempts = 1; // the default before 0.2.0
  s.threads = 2;
  s.order = order_mode::per_key;
  s.park = park_mode::sqlite;
  s.park_path = path;
  return s;
}

} // namespace

TEST_CASE("stop keeps unfinished events in a durable park store, and the "
          "next runtime starts with their keys parked in order",
          "[park][stop]") {
  test_support::temp_dir dir;
  auto path = dir.sub("park.db");
  std::atomic<int> started{0};
  handler_factory make = [&started](const handler_params&) {
    return std::make_unique<holding>(&started);
  };
  {
    auto rt = rt_type::start(durable(path), make);
    REQUIRE(rt);
    REQUIRE((*rt)->submit("A", std::string{"hang-1"}));
    REQUIRE((*rt)->submit("A", std::string{"a-2"}));
    REQUIRE((*rt)->submit("A", std::string{"a-3"}));
    REQUIRE((*rt)->submit("B", std::string{"b-1"}));
    std::unique_ptr<rt_type::event_type> b;
    REQUIRE((*rt)->pull(b, 10s));
    CHECK(b->payload == "b-1");
    auto report = (*rt)->stop();
    REQUIRE(report.unfinished.size() == 3);
    for (auto& u : report.unfinished) {
      CHECK(u.key == key{"A"});
      CHECK(u.kept);
    }
    CHECK(report.unfinished[0].stage == "running");
  }
  auto rt = rt_type::start(durable(path), make);
  REQUIRE(rt);
  auto keys = (*rt)->parked_keys();
  REQUIRE(keys);
  REQUIRE(keys->size() == 1);
  CHECK((*keys)[0].k == key{"A"});
  CHECK((*keys)[0].count == 3);
  auto evs = (*rt)->parked_events("A");
  REQUIRE(evs);
  REQUIRE(evs->size() == 3);
  CHECK((*evs)[0].payload == "hang-1");
  CHECK((*evs)[1].payload == "a-2");
  CHECK((*evs)[2].payload == "a-3");
  CHECK((*evs)[0].reason == "the runtime stopped before it finished");
  // A new event of A parks behind them; B runs.
  REQUIRE((*rt)->submit("A", std::string{"a-4"}));
  std::unique_ptr<rt_type::event_type> x;
  REQUIRE((*rt)->pull(x, 10s));
  CHECK(x->payload == "a-4");
  CHECK(x->status == outcome::parked);
  auto after = (*rt)->parked_events("A");
  REQUIRE(after);
  REQUIRE(after->size() == 4);
  CHECK((*after)[3].payload == "a-4");
  (*rt)->stop();
}
