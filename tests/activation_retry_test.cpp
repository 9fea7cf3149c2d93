// SPDX-License-Identifier: Apache-2.0
// A handler that cannot be built or activated (a database briefly down)
// fails the attempt at the head of its key's lane: the event's retry policy
// decides, and the key parks only when the attempts run out.

#include "runtime_support.hpp"

using namespace runtime_support;

namespace {

// Counts attempts at building and activating handlers; the first
// `failures` of them throw. The runtime builds one handler at start to
// check it can: that construction always succeeds.
struct flaky_start {
  std::atomic<int> constructions{0};
  std::atomic<int> activations{0};
  int failures = 0;
  bool in_constructor = false;
};

struct flaky_handler : kl::handler<int, int> {
  explicit flaky_handler(std::shared_ptr<flaky_start> s) : st(std::move(s)) {
    auto n = st->constructions++; // 0: the start's probe
    if (st->in_constructor && n > 0 && n <= st->failures)
      throw std::runtime_error("state store unreachable");
  }
  void on_activate(const kl::key&) override {
    if (!st->in_constructor && ++st->activations <= st->failures)
      throw std::runtime_error("state store unreachable");
  }
  void on_event(int& v, kl::completion<int> done) override { done.ok(v); }
  std::shared_ptr<flaky_start> st;
};

kl::handler_factory flaky(std::shared_ptr<flaky_start> st) {
  return [st](const kl::handler_params&) {
    return std::make_unique<flaky_handler>(st);
  };
}

kl::settings retrying(size_t attempts) {
  auto s = two_threads();
  s.max_attempts = attempts;
  s.initial_backoff_ms = 1;
  s.park = kl::park_mode::memory;
  return s;
}

void recovers(bool in_constructor) {
  auto st = std::make_shared<flaky_start>();
  st->failures = 2;
  st->in_constructor = in_constructor;
  auto rt = start<int_rt>(retrying(3), flaky(st));
  REQUIRE(rt->submit("acct", 1));
  REQUIRE(rt->submit("acct", 2));
  std::unique_ptr<int_rt::event_type> ev;
  REQUIRE(rt->pull(ev, 10s));
  CHECK(ev->payload == 1);
  CHECK(ev->status == kl::outcome::ok);
  CHECK(ev->attempts == 3); // two failed activations, then the event
  REQUIRE(rt->pull(ev, 10s));
  CHECK(ev->payload == 2);
  CHECK(ev->status == kl::outcome::ok);
  CHECK(ev->attempts == 1); // the lane is active now
  auto parked = rt->parked_keys();
  REQUIRE(parked);
  CHECK(parked->empty());
}

void parks_when_attempts_run_out(bool in_constructor) {
  auto st = std::make_shared<flaky_start>();
  st->failures = 1000;
  st->in_constructor = in_constructor;
  auto rt = start<int_rt>(retrying(4), flaky(st));
  for (int v = 1; v <= 3; ++v)
    REQUIRE(rt->submit("acct", v));
  std::unique_ptr<int_rt::event_type> ev;
  for (int v = 1; v <= 3; ++v) {
    REQUIRE(rt->pull(ev, 10s));
    CHECK(ev->payload == v);
    CHECK(ev->status == kl::outcome::parked);
  }
  auto recs = rt->parked_events("acct");
  REQUIRE(recs);
  REQUIRE(recs->size() == 3);
  CHECK((*recs)[0].attempts == 4);
  CHECK_THAT((*recs)[0].reason, Catch::Contains("state store unreachable"));
  // Each attempt tried to start the handler again.
  auto tries = in_constructor ? st->constructions.load() - 1 // the probe
                              : st->activations.load();
  CHECK(tries == 4);
}

} // namespace

TEST_CASE("an on_activate that throws is retried with the event's backoff and the event succeeds",
          "[runtime][retry][activation]") {
  recovers(false);
}

TEST_CASE("a handler constructor that throws is retried with the event's backoff and the event succeeds",
          "[runtime][retry][activation]") {
  recovers(true);
}

TEST_CASE("a key whose handler never activates parks after max_attempts attempts",
          "[runtime][retry][activation][parking]") {
  parks_when_attempts_run_out(false);
}

TEST_CASE("a key whose handler constructor always throws parks after max_attempts attempts",
          "[runtime][retry][activation][parking]") {
  parks_when_attempts_run_out(true);
}

TEST_CASE("a factory that returns no handler fails the event without retrying",
          "[runtime][retry][activation]") {
  auto s = retrying(5);
  s.park = kl::park_mode::none;
  std::atomic<int> calls{0};
  // The start's probe gets a handler; the key's lane gets none.
  auto rt = start<int_rt>(s, kl::handler_factory{[&](const kl::handler_params&) {
                            std::unique_ptr<kl::handler_base> h;
                            if (calls++ == 0)
                              h = std::make_unique<scripted>();
                            return h;
                          }});
  REQUIRE(rt->submit("k", 1));
  std::unique_ptr<int_rt::event_type> ev;
  REQUIRE(rt->pull(ev, 10s));
  CHECK(ev->status == kl::outcome::failed);
  CHECK(ev->attempts == 1);
  CHECK_THAT(ev->error, Catch::Contains("returned no handler"));
  CHECK(calls.load() == 2);
}

TEST_CASE("a lane whose factory stops returning handlers fails its later events without asking it again",
          "[runtime][retry][activation]") {
  auto s = retrying(3);
  s.park = kl::park_mode::none;
  std::atomic<int> calls{0};
  // The probe gets a handler, the lane's first try throws, every later
  // one returns none: retrying cannot help once that is known.
  auto rt = start<int_rt>(s, kl::handler_factory{[&](const kl::handler_params&) {
                            auto n = calls++;
                            if (n == 1)
                              throw std::runtime_error("store down");
                            std::unique_ptr<kl::handler_base> h;
                            if (n == 0)
                              h = std::make_unique<scripted>();
                            return h;
                          }});
  for (int v = 1; v <= 3; ++v)
    REQUIRE(rt->submit("k", v));
  std::unique_ptr<int_rt::event_type> ev;
  REQUIRE(rt->pull(ev, 10s));
  CHECK(ev->status == kl::outcome::failed);
  CHECK(ev->attempts == 2);
  CHECK_THAT(ev->error, Catch::Contains("returned no handler"));
  for (int v = 2; v <= 3; ++v) {
    REQUIRE(rt->pull(ev, 10s));
    CHECK(ev->status == kl::outcome::failed);
    CHECK(ev->attempts == 1);
  }
  CHECK(calls.load() == 3);
}
