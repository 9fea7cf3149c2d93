// SPDX-License-Identifier: Apache-2.0
// The test kit's own tests: completions, the clock, retries and parking,
// messages, keyed state and its rollback, retire and crash.
#include <chrono>
#include <memory>

#include <catch2/catch.hpp>

#include <caf/all.hpp>

#include <keylane/testing/kit.hpp>

#include "script_handler.hpp"

using namespace std::chrono_literals;
using keylane::outcome;
using kit_test::cmd;
using kit_test::script_handler;
using test_kit = keylane::testing::kit<cmd, int64_t>;

namespace {

keylane::handler_factory scripts() {
  return [](const keylane::handler_params&) {
    return std::make_unique<script_handler>();
  };
}

keylane::settings no_retries() {
  keylane::settings cfg;
  cfg.max_attempts = 1;
  return cfg;
}

} // namespace

TEST_CASE("every completion kind reaches the test: ok, skip, fail, "
          "fail_permanently and pending",
          "[testing][completion]") {
  auto cfg = no_retries();
  cfg.park = keylane::park_mode::none; // a failure ends as failed
  test_kit kit{scripts(), cfg};
  auto ok = kit.submit("a", cmd{"ok", 7});
  auto skip = kit.submit("b", cmd{"skip"});
  auto fail = kit.submit("c", cmd{"fail"});
  auto hang = kit.submit("d", cmd{"hang"});
  // Nothing runs before the test says so.
  CHECK(kit.status(ok) == outcome::pending);
  kit.run_until_idle();
  CHECK(kit.status(ok) == outcome::ok);
  CHECK(kit.result(ok) == 7);
  CHECK(kit.status(skip) == outcome::skipped);
  CHECK_FALSE(kit.result(skip));
  CHECK(kit.status(fail) == outcome::failed);
  CHECK(kit.error(fail) == "told to fail");
  CHECK(kit.status(hang) == outcome::pending);
  // A permanent failure parks its key under the default park mode.
  test_kit parking{scripts()};
  auto dead = parking.submit("e", cmd{"fail_permanently"});
  parking.run_until_idle();
  CHECK(parking.status(dead) == outcome::parked);
  CHECK(parking.attempts(dead) == 1);
  CHECK(parking.error(dead) == "told to fail for good");
}

TEST_CASE("a completion kept by the handler ends its event when it is "
          "finished later, and the key's next event waits for it",
          "[testing][completion]") {
  test_kit kit{scripts()};
  auto kept = kit.submit("a", cmd{"keep"});
  auto behind = kit.submit("a", cmd{"ok", 2});
  kit.run_until_idle();
  CHECK(kit.status(kept) == outcome::pending);
  CHECK(kit.status(behind) == outcome::pending); // per-key order
  auto other = kit.submit("b", cmd{"finish", 5});
  kit.run_until_idle();
  CHECK(kit.status(other) == outcome::ok);
  CHECK(kit.status(kept) == outcome::pending); // b's handler kept none
  kit.handler_of<script_handler>("a").kept->ok(9);
  kit.handler_of<script_handler>("a").kept.reset();
  kit.run_until_idle();
  CHECK(kit.result(kept) == 9);
  CHECK(kit.result(behind) == 2);
  CHECK(kit.ended() == std::vector<uint64_t>{other, kept, behind});
}

TEST_CASE("a dropped completion fails its event, as in the runtime",
          "[testing][completion]") {
  auto cfg = no_retries();
  cfg.park = keylane::park_mode::none;
  test_kit kit{scripts(), cfg};
  auto hung = kit.submit("a", cmd{"hang"});
  kit.run_until_idle();
  kit.handler_of<script_handler>("a").hung.reset();
  kit.run_until_idle();
  CHECK(kit.status(hung) == outcome::failed);
  CHECK_THAT(kit.error(hung), Catch::Contains("dropped completion"));
}

TEST_CASE("run_later timers fire in due order across advances, never before "
          "their time",
          "[testing][clock]") {
  test_kit kit{scripts()};
  auto slow = kit.submit("a", cmd{"later", 50});
  auto fast = kit.submit("b", cmd{"later", 20});
  auto mid = kit.submit("c", cmd{"later", 30});
  kit.advance(19ms);
  CHECK(kit.ended().empty());
  kit.advance(1ms);
  CHECK(kit.ended() == std::vector<uint64_t>{fast});
  kit.advance(100ms); // one advance past both: each fires at its own time
  CHECK(kit.ended() == std::vector<uint64_t>{fast, mid, slow});
  CHECK(kit.result(slow) == 50);
  CHECK(kit.now() == 120ms);
}

TEST_CASE("a failing attempt is retried after the backoff on the test's "
          "clock, then its key parks with the events behind it",
          "[testing][retry]") {
  keylane::settings cfg; // 3 attempts, 10 ms then 20 ms
  test_kit kit{scripts(), cfg};
  auto third = kit.submit("a", cmd{"fail_until", 3});
  kit.run_until_idle();
  CHECK(kit.attempts(third) == 1);
  kit.advance(9ms);
  CHECK(kit.attempts(third) == 1);
  kit.advance(1ms);
  CHECK(kit.attempts(third) == 2);
  kit.advance(20ms);
  CHECK(kit.status(third) == outcome::ok);
  CHECK(kit.result(third) == 3);

  auto doomed = kit.submit("b", cmd{"fail"});
  auto behind = kit.submit("b", cmd{"ok", 1});
  kit.advance(1s);
  CHECK(kit.attempts(doomed) == 3);
  CHECK(kit.parked("b"));
  CHECK(kit.parked_events("b") == std::vector<uint64_t>{doomed, behind});
  CHECK(kit.status(behind) == outcome::parked);
  auto later = kit.submit("b", cmd{"ok", 2});
  kit.run_until_idle();
  CHECK(kit.status(later) == outcome::parked); // parks behind
  CHECK_FALSE(kit.parked("a"));
}

TEST_CASE("an attempt that does not complete in time fails when the clock "
          "passes its timeout, and its late completion is ignored",
          "[testing][clock][retry]") {
  auto cfg = no_retries();
  cfg.attempt_timeout_ms = 100;
  cfg.park = keylane::park_mode::none;
  test_kit kit{scripts(), cfg};
  auto kept = kit.submit("a", cmd{"keep"});
  kit.advance(99ms);
  CHECK(kit.status(kept) == outcome::pending);
  kit.advance(1ms);
  CHECK(kit.status(kept) == outcome::failed);
  CHECK(kit.error(kept) == "attempt timed out after 100 ms");
  kit.handler_of<script_handler>("a").kept->ok(1);
  kit.run_until_idle();
  CHECK(kit.status(kept) == outcome::failed);
}

TEST_CASE("an ask to a stubbed key is answered by the test, failed by it, "
          "or times out",
          "[testing][messages]") {
  test_kit kit{scripts(), no_retries()};
  kit.stub("bank");
  auto answered = kit.submit("a", cmd{"ask", 5, "bank"});
  auto failed = kit.submit("b", cmd{"ask", 6, "bank"});
  auto timed_out = kit.submit("c", cmd{"ask", 7, "bank"});
  kit.run_until_idle();
  REQUIRE(kit.sent().size() == 3);
  auto& first = kit.sent()[0];
  CHECK(first.kind == keylane::testing::message_kind::ask);
  CHECK(first.from == keylane::key{"a"});
  CHECK(first.to == keylane::key{"bank"});
  CHECK(first.payload.value == 5);
  CHECK(first.timeout == 100ms);
  CHECK(kit.answer(first.id, 500));
  CHECK(kit.fail_ask(kit.sent()[1].id, "no funds"));
  kit.advance(99ms);
  CHECK(kit.ask_waiting(kit.sent()[2].id));
  kit.advance(1ms);
  CHECK_FALSE(kit.ask_waiting(kit.sent()[2].id));
  CHECK(kit.result(answered) == 500);
  CHECK(kit.status(failed) == outcome::parked);
  CHECK_THAT(kit.error(failed), Catch::Contains("no funds"));
  CHECK_THAT(kit.error(timed_out), Catch::Contains("timed out"));
}

TEST_CASE("an ask to a key under test runs there and answers with its "
          "result",
          "[testing][messages]") {
  test_kit kit{scripts()};
  kit.submit("acct", cmd{"add", 100});
  auto asked = kit.submit("book", cmd{"ask", 5, "acct"});
  kit.run_until_idle();
  CHECK(kit.result(asked) == 105);
  CHECK(kit.handler_of<script_handler>("acct").state() == 105);
}

TEST_CASE("a tell reaches the other key's handler after the event ends, and "
          "a failed attempt's tell never leaves",
          "[testing][messages]") {
  test_kit kit{scripts(), no_retries()};
  kit.submit("from", cmd{"tell", 3, "to"});
  kit.run_until_idle();
  REQUIRE(kit.sent().size() == 1);
  CHECK(kit.sent()[0].kind == keylane::testing::message_kind::tell);
  CHECK(kit.handler_of<script_handler>("to").state() == 3);
  kit.submit("from", cmd{"add_then_fail", 4, "to"});
  kit.run_until_idle();
  CHECK(kit.sent().size() == 1);
  CHECK(kit.handler_of<script_handler>("to").state() == 3);
}

TEST_CASE("keyed state is rolled back when an attempt fails, and kept when "
          "rollback is off",
          "[testing][state]") {
  test_kit kit{scripts(), no_retries()};
  kit.submit("a", cmd{"add", 10});
  kit.submit("a", cmd{"add_then_fail", 5, "elsewhere"});
  kit.run_until_idle();
  CHECK(kit.handler_of<script_handler>("a").state() == 10);
  CHECK(kit.handler_of<script_handler>("a").applied_events() == 1);

  auto cfg = no_retries();
  cfg.state_rollback = false;
  test_kit kept{scripts(), cfg};
  kept.submit("a", cmd{"add", 10});
  kept.submit("a", cmd{"add_then_fail", 5, "elsewhere"});
  kept.run_until_idle();
  CHECK(kept.handler_of<script_handler>("a").state() == 15);
}

TEST_CASE("a lane retires after its linger and reloads its state, and a crash "
          "loses what a lost checkpoint held",
          "[testing][state][lifecycle]") {
  keylane::settings cfg; // lane_linger_ms = 100
  cfg.state_store = keylane::state_backend::rocksdb; // the kit's, in memory
  test_kit kit{scripts(), cfg};
  kit.submit("a", cmd{"add", 10});
  kit.advance(99ms);
  CHECK(kit.active("a"));
  kit.advance(1ms);
  CHECK_FALSE(kit.active("a"));
  REQUIRE(kit.checkpoints("a").size() == 1);
  auto reloaded = kit.submit("a", cmd{"add", 1});
  kit.run_until_idle();
  CHECK(kit.result(reloaded) == 11);
  CHECK(kit.handler_of<script_handler>("a").activations == 1); // a new one

  kit.checkpoint(); // 11
  kit.submit("a", cmd{"add", 100});
  kit.run_until_idle();
  kit.crash(); // the 100 was never written
  auto after = kit.submit("a", cmd{"add", 0});
  kit.run_until_idle();
  CHECK(kit.result(after) == 11);
  kit.crash({"a"}); // and now the checkpoint of 11 is lost too
  auto older = kit.submit("a", cmd{"add", 0});
  kit.run_until_idle();
  CHECK(kit.result(older) == 10);
}

TEST_CASE("hold keeps a lane past its linger, release lets it retire, and "
          "a turn budget is recorded",
          "[testing][lifecycle]") {
  test_kit kit{scripts()};
  kit.submit("room", cmd{"hold"});
  kit.submit("room", cmd{"budget", 50});
  kit.advance(1s);
  CHECK(kit.active("room"));
  CHECK(kit.held("room"));
  CHECK(kit.turn_budget("room") == size_t{50});
  CHECK_FALSE(kit.retire("room"));
  kit.submit("room", cmd{"release"});
  kit.advance(100ms);
  CHECK_FALSE(kit.active("room"));
}

TEST_CASE("tell_after fires on the test's clock and can be cancelled",
          "[testing][clock][messages]") {
  keylane::settings cfg;
  cfg.state_store = keylane::state_backend::memory;
  test_kit kit{scripts(), cfg};
  kit.submit("a", cmd{"timer", 30, "b"});
  kit.advance(29ms);
  CHECK_FALSE(kit.active("b"));
  kit.advance(1ms);
  CHECK(kit.handler_of<script_handler>("b").state() == 1);
  REQUIRE(kit.sent().size() == 1);
  CHECK(kit.sent()[0].delay == 30ms);

  kit.submit("a", cmd{"timer", 30, "b"});
  auto cancel = kit.submit("a", cmd{"cancel"});
  kit.advance(1s);
  CHECK(kit.result(cancel) == 1);
  CHECK(kit.checkpoints("b").back().state.size() > 0);
  CHECK_FALSE(kit.active("b")); // retired after its linger, no second add
}

TEST_CASE("a kit is made from a registry name as the runtime makes it, and "
          "refuses a name it does not have",
          "[testing][completion]") {
  keylane::handler_registry reg;
  reg.add<script_handler>("script");
  test_kit kit{reg, "script"};
  auto id = kit.submit("a", cmd{"ok", 3});
  kit.run_until_idle();
  CHECK(kit.result(id) == 3);
  CHECK_THROWS_AS((test_kit{reg, "nope"}), std::invalid_argument);
}

TEST_CASE("a handler's requests to actors of the kit's system are answered "
          "in the test's thread, and time out on the test's clock",
          "[testing][clock]") {
  auto cfg = no_retries();
  cfg.park = keylane::park_mode::none;
  caf::actor db;
  test_kit kit{[&db](const keylane::handler_params&) {
                 auto h = std::make_unique<script_handler>();
                 h->db = db;
                 return h;
               },
               cfg};
  // Doubles what it gets; never answers a negative number. (Its factor
  // is an argument: CAF 0.17 binds an empty argument tuple through a null
  // pointer, which UBSan reports.)
  db = kit.system().spawn(
    [](int64_t factor) -> caf::behavior {
      return {[factor](int64_t x) -> caf::result<int64_t> {
        if (x < 0)
          return caf::delegated<int64_t>{};
        return x * factor;
      }};
    },
    int64_t{2});
  auto answered = kit.submit("a", cmd{"request", 21});
  auto unanswered = kit.submit("b", cmd{"request", -1});
  kit.run_until_idle();
  CHECK(kit.result(answered) == 42);
  CHECK(kit.status(unanswered) == outcome::pending);
  kit.advance(100ms);
  CHECK(kit.status(unanswered) == outcome::failed);
  caf::anon_send_exit(db, caf::exit_reason::user_shutdown);
}
