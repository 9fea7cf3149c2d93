// SPDX-License-Identifier: Apache-2.0
// run_later takes move-only callables, so a handler can hand its completion
// to a timer as the README shows.

#include "runtime_support.hpp"

using namespace runtime_support;

namespace {

// Finishes each event from a timer that owns the completion: before
// run_later took move-only callables this did not compile ("std::function
// target must be copy-constructible").
struct delayed_echo : kl::handler<int, int> {
  void on_event(int& v, kl::completion<int> done) override {
    run_later(std::chrono::milliseconds(v % 3),
              [d = std::move(done), r = v + 1]() mutable { d.ok(r); });
  }
};

} // namespace

TEST_CASE("a run_later timer can own the completion and finish it",
          "[runtime][timer][run_later]") {
  kl::handler_registry reg;
  reg.add<delayed_echo>("test");
  auto s = two_threads();
  s.order = kl::order_mode::global;
  auto rt = start<int_rt>(s, reg);
  constexpr int n = 300;
  for (int i = 0; i < n; ++i)
    REQUIRE(rt->submit("k" + std::to_string(i % 7), i));
  std::unique_ptr<int_rt::event_type> ev;
  for (int i = 0; i < n; ++i) {
    REQUIRE(rt->pull(ev, 10s));
    CHECK(ev->seq == uint64_t(i));
    CHECK(ev->status == kl::outcome::ok);
    REQUIRE(ev->result);
    CHECK(*ev->result == ev->payload + 1);
  }
  CHECK_FALSE(rt->try_pull(ev));
}

TEST_CASE("a run_later timer that never fires drops its completion, which fails the event",
          "[runtime][timer][run_later]") {
  // The lane keeps the timer, so the completion it owns lives until the
  // timer fires; an attempt timeout ends the wait, and the late completion
  // is ignored.
  struct never : kl::handler<int, int> {
    void on_event(int&, kl::completion<int> done) override {
      run_later(std::chrono::hours(1),
                [d = std::move(done)]() mutable { d.ok(1); });
    }
  };
  kl::handler_registry reg;
  reg.add<never>("test");
  auto s = two_threads();
  s.attempt_timeout_ms = 50;
  auto rt = start<int_rt>(s, reg);
  REQUIRE(rt->submit("k", 1));
  std::unique_ptr<int_rt::event_type> ev;
  REQUIRE(rt->pull(ev, 10s));
  CHECK(ev->status == kl::outcome::failed);
  CHECK_THAT(ev->error, Catch::Contains("timed out"));
}
