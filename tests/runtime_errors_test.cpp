// SPDX-License-Identifier: Apache-2.0
// Functional tests of keylane::runtime where things go wrong: rejected and
// blocked submits, failing handlers, bad configuration, stop and timeouts.
#include "runtime_support.hpp"

using namespace runtime_support;

namespace {
// Holds completions until the test releases them (from the test thread).
struct gate {
  std::mutex mtx;
  std::condition_variable cv;
  std::vector<std::pair<std::string, kl::completion<std::string>>> held;
  size_t total = 0; // ever held
  void put(std::string p, kl::completion<std::string> c) {
    std::lock_guard<std::mutex> guard{mtx};
    held.emplace_back(std::move(p), std::move(c));
    ++total;
    cv.notify_all();
  }
  bool wait_held(size_t n) {
    std::unique_lock<std::mutex> guard{mtx};
    return cv.wait_for(guard, 10s, [&] { return total >= n; });
  }
  void release() { // finishes each held event with "<payload>!"
    decltype(held) xs;
    { std::lock_guard<std::mutex> guard{mtx}; xs.swap(held); }
    for (auto& [p, c] : xs)
      c.ok(p + "!");
  }
  void drop() { // call after stop(): no completion may outlive the runtime
    decltype(held) xs;
    std::lock_guard<std::mutex> guard{mtx};
    xs.swap(held);
  }
};

kl::handler_factory hold(std::shared_ptr<gate> g) {
  return from_fn<std::string, std::string>(
    [g](auto&, std::string& p, kl::completion<std::string> done) {
      g->put(p, std::move(done));
    });
}

kl::handler_factory echo() {
  return from_fn<std::string, std::string>(
    [](auto&, std::string& p, kl::completion<std::string> done) {
      done.ok(p + "!");
    });
}

template <class Rt>
using event_ptr = std::unique_ptr<typename Rt::event_type>;

} // namespace

TEST_CASE("a full window rejects a submit and leaves its payload untouched",
          "[runtime][admission]") {
  auto g = std::make_shared<gate>();
  auto cfg = two_threads();
  cfg.window = 2;
  cfg.overflow = kl::overflow_policy::reject;
  auto rt = start<str_rt>(cfg, hold(g));
  at_exit cleanup{[&] { rt->stop(); g->drop(); }};
  REQUIRE(rt->submit("a", "1"));
  REQUIRE(rt->submit("b", "2"));
  std::string payload = "keep me";
  auto r = rt->submit("c", std::move(payload));
  CHECK(r.code() == kl::errc::window_full);
  CHECK_FALSE(r.ok());
  CHECK(payload == "keep me");
  CHECK(rt->stats().rejected == 1);
  // Credit comes back on delivery, not on completion.
  REQUIRE(g->wait_held(2));
  g->release();
  REQUIRE(eventually([&] { return rt->stats().ok == 2; }));
  CHECK(rt->submit("c", std::string{payload}).code()
        == kl::errc::window_full);
  event_ptr<str_rt> ev;
  REQUIRE(rt->pull(ev, 10s));
  auto again = rt->submit("c", std::move(payload));
  REQUIRE(again.ok());
  CHECK(again.seq() == 2);
  REQUIRE(g->wait_held(3));
  g->release();
  REQUIRE(rt->pull(ev, 10s));
  REQUIRE(rt->pull(ev, 10s));
  CHECK(*ev->result == "keep me!");
}

TEST_CASE("a full key backlog rejects that key while other keys are accepted",
          "[runtime][admission]") {
  auto g = std::make_shared<gate>();
  auto cfg = two_threads();
  cfg.key_backlog = 2;
  cfg.overflow = kl::overflow_policy::reject;
  auto rt = start<str_rt>(cfg, hold(g));
  at_exit cleanup{[&] { rt->stop(); g->drop(); }};
  REQUIRE(rt->submit("a", "a1"));
  REQUIRE(rt->submit("a", "a2"));
  std::string payload = "a3";
  CHECK(rt->submit("a", std::move(payload)).code()
        == kl::errc::key_backlog_full);
  CHECK(payload == "a3");
  REQUIRE(rt->submit("b", "b1"));
  REQUIRE(rt->submit(kl::key{1}, "n1"));
  // A backlog slot comes back when an event of the key completes.
  REQUIRE(g->wait_held(3)); // a1, b1, n1
  g->release();
  REQUIRE(eventually([&] { return rt->stats().ok == 3; }));
  REQUIRE(rt->submit("a", std::move(payload)));
  REQUIRE(g->wait_held(4)); // a2
  g->release();
  REQUIRE(g->wait_held(5)); // a3
  g->release();
  event_ptr<str_rt> ev;
  std::vector<std::string> results;
  for (int i = 0; i < 5; ++i) {
    REQUIRE(rt->pull(ev, 10s));
    results.push_back(*ev->result);
  }
  CHECK(results
        == std::vector<std::string>{"a1!", "a2!", "b1!", "n1!", "a3!"});
  CHECK(rt->stats().rejected == 1);
}

TEST_CASE("a stopped runtime rejects submits with stopped and keeps the payload",
          "[runtime][admission][stop]") {
  auto rt = start<str_rt>(two_threads(), echo());
  REQUIRE(rt->submit("a", "x"));
  rt->stop();
  std::string payload = "after stop";
  CHECK(rt->submit("a", std::move(payload)).code() == kl::errc::stopped);
  CHECK(payload == "after stop");
}

TEST_CASE("with overflow block a submit waits while the window is full and goes in once a slot frees",
          "[runtime][admission][block]") {
  auto cfg = two_threads();
  cfg.window = 8;
  cfg.overflow = kl::overflow_policy::block;
  auto rt = start<str_rt>(cfg, echo());
  for (int i = 0; i < 8; ++i)
    REQUIRE(rt->submit(kl::key{i}, "x"));
  REQUIRE(eventually([&] { return rt->stats().ok == 8; }));
  std::atomic<bool> done{false};
  auto result = kl::submit_result::rejected(kl::errc::timeout);
  std::thread t{[&] {
    result = rt->submit("c", "late");
    done = true;
  }};
  at_exit join{[&] { // a submit that never returns must not hang the test
    if (!done)
      rt->stop();
    t.join();
  }};
  // Nothing is pulled, so the window stays full: the submit must wait.
  CHECK_FALSE(eventually([&] { return done.load(); }, 100ms));
  event_ptr<str_rt> ev;
  REQUIRE(rt->pull(ev, 10s)); // one slot free
  REQUIRE(eventually([&] { return done.load(); }));
  CHECK(result.ok());
  CHECK(result.seq() == 8);
}

TEST_CASE("with overflow block a submit waits for its key's backlog and goes in once an event completes",
          "[runtime][admission][block]") {
  auto g = std::make_shared<gate>();
  auto cfg = two_threads();
  cfg.key_backlog = 1;
  cfg.overflow = kl::overflow_policy::block;
  auto rt = start<str_rt>(cfg, hold(g));
  at_exit cleanup{[&] { rt->stop(); g->drop(); }};
  REQUIRE(rt->submit("a", "a1"));
  REQUIRE(rt->submit("b", "b1")); // another key is not held up
  std::atomic<bool> done{false};
  auto result = kl::submit_result::rejected(kl::errc::timeout);
  std::thread t{[&] {
    result = rt->submit("a", "a2");
    done = true;
  }};
  at_exit join{[&] {
    if (!done)
      rt->stop();
    t.join();
  }};
  REQUIRE(g->wait_held(2));
  CHECK_FALSE(eventually([&] { return done.load(); }, 100ms));
  g->release();
  REQUIRE(eventually([&] { return done.load(); }));
  CHECK(result.ok());
}

TEST_CASE("a submit blocked on a full window returns stopped when the runtime stops",
          "[runtime][admission][block][stop]") {
  auto cfg = two_threads();
  cfg.window = 2;
  cfg.overflow = kl::overflow_policy::block;
  auto rt = start<str_rt>(cfg, echo());
  REQUIRE(rt->submit("a", "1"));
  REQUIRE(rt->submit("b", "2"));
  std::atomic<bool> done{false};
  auto result = kl::submit_result::rejected(kl::errc::timeout);
  std::thread t{[&] {
    result = rt->submit("c", "3");
    done = true;
  }};
  at_exit join{[&] { t.join(); }};
  CHECK_FALSE(eventually([&] { return done.load(); }, 100ms));
  auto report = rt->stop();
  REQUIRE(eventually([&] { return done.load(); }));
  CHECK(result.code() == kl::errc::stopped);
  CHECK(report.accepted == 2);
}

TEST_CASE("a failing, throwing or dropping handler fails only its own event",
          "[runtime][errors]") {
  auto rt = start<int_rt>(two_threads(), scripted_registry());
  std::vector<int> script{1, throws, 2, skips, drops, fails, twice, 3};
  for (int v : script)
    REQUIRE(rt->submit("k", v));
  REQUIRE(rt->submit("other", 7));
  std::map<uint64_t, event_ptr<int_rt>> out;
  for (size_t i = 0; i <= script.size(); ++i) {
    event_ptr<int_rt> ev;
    REQUIRE(rt->pull(ev, 10s));
    out[ev->seq] = std::move(ev);
  }
  auto is_ok = [&](uint64_t seq, int result) {
    INFO("seq " << seq << ": " << kl::to_string(out[seq]->status) << " "
                << out[seq]->error);
    CHECK(out[seq]->status == kl::outcome::ok);
    CHECK(out[seq]->result == result);
  };
  auto is_failed = [&](uint64_t seq, const std::string& text) {
    CHECK(out[seq]->status == kl::outcome::failed);
    CHECK_THAT(out[seq]->error, Catch::Contains(text));
    CHECK_FALSE(out[seq]->result.has_value());
  };
  is_ok(0, 10);
  is_failed(1, "boom"); // the exception text
  is_ok(2, 20);         // the key's next event still runs
  CHECK(out[3]->status == kl::outcome::skipped);
  CHECK(out[3]->error.empty());
  CHECK_FALSE(out[3]->result.has_value());
  is_failed(4, "dropped");
  is_failed(5, "refused");
  is_ok(6, 1); // finished three times, applied once
  is_ok(7, 30);
  is_ok(8, 70);
  CHECK(eventually([&] { // the counters may trail delivery
    auto s = rt->stats();
    return s.ok + s.skipped + s.failed == 9;
  }));
  auto s = rt->stats();
  CHECK(s.ok == 5);
  CHECK(s.skipped == 1);
  CHECK(s.failed == 3);
}

TEST_CASE("an unknown handler name or a mistyped handler fails the start",
          "[runtime][config]") {
  auto reg = scripted_registry();
  auto r = int_rt::start(two_threads("nope"), reg);
  REQUIRE_FALSE(r);
  CHECK(r.error().category() == caf::atom("keylane"));
  CHECK(r.error().code() == uint8_t(kl::errc::unknown_handler));
  CHECK_THAT(kl::render(r.error()), Catch::Contains("nope"));
  // "test" is registered for <int, int>, not for <string, string>.
  auto typed = str_rt::start(two_threads("test"), reg);
  REQUIRE_FALSE(typed);
  CHECK(typed.error().code() == uint8_t(kl::errc::unknown_handler));
}

TEST_CASE("settings filled in code with a zero bound fail the start instead "
          "of spinning",
          "[runtime][config]") {
  auto reg = scripted_registry();
  std::vector<std::function<void(kl::settings&)>> breakers{
    [](kl::settings& s) { s.max_active_keys = 0; },
    [](kl::settings& s) { s.window = 0; },
    [](kl::settings& s) { s.key_backlog = 0; },
    [](kl::settings& s) { s.lane_batch = 0; },
    [](kl::settings& s) { s.ingress_batch = 0; },
    [](kl::settings& s) { s.max_attempts = 0; },
    [](kl::settings& s) { s.max_throughput = 0; },
    [](kl::settings& s) { s.backoff_multiplier = 0.5; },
  };
  for (size_t i = 0; i < breakers.size(); ++i) {
    INFO("breaker " << i);
    auto s = two_threads();
    breakers[i](s);
    auto r = int_rt::start(s, reg);
    REQUIRE_FALSE(r);
    CHECK(r.error().code() == uint8_t(kl::errc::invalid_config));
  }
}

namespace {

struct latency_handler : kl::handler<int, int> {
  explicit latency_handler(const kl::handler_params& p)
    : us(p.get_int("latency_us", 0)) {}
  void on_event(int&, kl::completion<int> done) override {
    done.ok(static_cast<int>(us));
  }
  int64_t us;
};

} // namespace

TEST_CASE("a handler reads its params, and an unread or mistyped param fails the start",
          "[runtime][config][params]") {
  kl::handler_registry reg;
  reg.add<latency_handler>("latency");
  auto cfg = two_threads("latency");
  cfg.params.set("latency_us", int64_t{250});
  {
    auto rt = start<int_rt>(cfg, reg);
    REQUIRE(rt->submit("k", 0));
    event_ptr<int_rt> ev;
    REQUIRE(rt->pull(ev, 10s));
    CHECK(ev->result == 250);
  }
  auto bogus = cfg;
  bogus.params.set("bogus", int64_t{1});
  auto r = int_rt::start(bogus, reg);
  REQUIRE_FALSE(r);
  CHECK(r.error().code() == uint8_t(kl::errc::invalid_config));
  CHECK_THAT(kl::render(r.error()), Catch::Contains("bogus"));
  auto mistyped = two_threads("latency");
  mistyped.params.set("latency_us", std::string{"fast"});
  auto m = int_rt::start(mistyped, reg);
  REQUIRE_FALSE(m);
  CHECK(m.error().code() == uint8_t(kl::errc::invalid_config));
  CHECK_THAT(kl::render(m.error()), Catch::Contains("latency_us"));
}

TEST_CASE("stop ends promptly with events running and queued and lists each once",
          "[runtime][stop]") {
  auto g = std::make_shared<gate>();
  auto rt = start<str_rt>(two_threads(), hold(g));
  at_exit cleanup{[&] { rt->stop(); g->drop(); }};
  REQUIRE(rt->submit("a", "first"));
  REQUIRE(g->wait_held(1));
  g->release();
  event_ptr<str_rt> ev;
  REQUIRE(rt->pull(ev, 10s)); // seq 0 delivered
  const std::vector<kl::key> keys{"a", "b", "c"};
  for (int i = 0; i < 4; ++i)
    for (auto& k : keys)
      REQUIRE(rt->submit(k, "e")); // seqs 1..12, keys a b c a b c ...
  REQUIRE(g->wait_held(4));
  g->release();              // seqs 1-3 complete, never pulled
  REQUIRE(g->wait_held(7));  // seqs 4-6 run and never complete
  REQUIRE(eventually([&] { return rt->stats().ok == 4; }));
  auto t0 = clk::now();
  auto report = rt->stop();
  CHECK(clk::now() - t0 < 2s);
  CHECK(report.accepted == 13);
  CHECK(report.delivered == 1);
  CHECK(report.accepted == report.delivered + report.unfinished.size());
  std::map<uint64_t, std::string> stage;
  for (auto& u : report.unfinished) {
    CHECK(stage.emplace(u.seq, u.stage).second); // listed once
    CHECK(u.key == keys[(u.seq - 1) % 3]);
  }
  for (uint64_t seq = 1; seq <= 12; ++seq) {
    INFO("seq " << seq);
    REQUIRE(stage.count(seq) == 1);
    CHECK(stage[seq]
          == (seq <= 3 ? "completed" : seq <= 6 ? "running" : "queued"));
  }
}

TEST_CASE("drain with a timeout fails while a completion is held and succeeds after",
          "[runtime][drain]") {
  auto g = std::make_shared<gate>();
  std::atomic<int> delivered{0};
  auto rt = start<str_rt>(two_threads(), hold(g),
                          [&](str_rt::event_type&) { ++delivered; });
  at_exit cleanup{[&] { rt->stop(); g->drop(); }};
  REQUIRE(rt->submit("a", "x"));
  REQUIRE(rt->submit("b", "y"));
  REQUIRE(g->wait_held(2));
  CHECK_FALSE(rt->drain(50ms));
  // One read each: the message shows the value that was checked.
  auto before = delivered.load();
  CHECK(before == 0);
  g->release();
  CHECK(rt->drain(10s));
  // drain returns once every callback returned: the count is final here.
  auto after = delivered.load();
  CHECK(after == 2);
}
