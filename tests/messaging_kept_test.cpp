// SPDX-License-Identifier: Apache-2.0
// Exactly once with keyed state (messaging.exactly_once): a stateful
// handler's tells are kept in its record, sent once it is written, sent
// again at start, and applied once by a stateful target.

#include <algorithm>
#include <atomic>
#include <map>
#include <thread>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include <keylane/detail/state_record.hpp>
#include <keylane/runtime.hpp>
#include <keylane/state_store.hpp>
#include <keylane/stateful_handler.hpp>

#include "runtime_support.hpp"
#include "temp_dir.hpp"

namespace kl = keylane;
using kl::detail::state_record;
using namespace std::chrono_literals;
using namespace runtime_support;

namespace {

struct seen {
  std::vector<uint64_t> got;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, seen& x) {
  return f(caf::meta::type_name("seen"), x.got);
}

using relay_rt = kl::runtime<uint64_t, uint64_t>;

// A key keeps what it got; a payload of 1000 or more is told on to "t",
// less 1000.
struct relay : kl::stateful_handler<uint64_t, uint64_t, seen> {
  void on_event(uint64_t& p, kl::completion<uint64_t> done) override {
    state().got.push_back(p);
    if (p >= 1000 && tell("t", p - 1000) != kl::errc::none)
      return done.fail("not told");
    done.ok(p);
  }
};

kl::settings kept_settings(const std::string& dir) {
  kl::settings s;
  s.max_attempts = 1; // the default before 0.2.0
  s.order = kl::order_mode::none;
  s.state_store = kl::state_backend::rocksdb;
  s.state_path = dir;
  s.state_checkpoint_ms = 5;
  return s;
}

kl::handler_factory relays() {
  return [](const kl::handler_params&) { return std::make_unique<relay>(); };
}

std::string encoded(const seen& s) {
  auto b = kl::codec<seen>::encode(s);
  REQUIRE(b);
  return *b;
}

std::string payload(uint64_t p) {
  auto b = kl::codec<uint64_t>::encode(p);
  REQUIRE(b);
  return *b;
}

// The records of `dir`, read once the runtime is gone.
std::map<std::string, state_record> records(const std::string& dir) {
  auto st = kl::open_rocksdb_state_store(dir, true);
  REQUIRE(st);
  std::map<std::string, state_record> out;
  auto err = (*st)->scan([&](const kl::key& k, std::string_view bytes) {
    auto r = kl::detail::decode_state_record(bytes);
    REQUIRE(r);
    out[k.to_string()] = std::move(*r);
    return true;
  });
  REQUIRE_FALSE(err);
  return out;
}

seen state_of(const state_record& r) {
  auto s = kl::codec<seen>::decode(r.state);
  REQUIRE(s);
  return std::move(*s);
}

void run_until_drained(const kl::settings& s,
                       const std::vector<std::pair<std::string, uint64_t>>& in
                       = {}) {
  auto rt = start<relay_rt>(s, relays(), [](relay_rt::event_type&) {});
  for (auto& [k, p] : in)
    REQUIRE(rt->submit(k, uint64_t{p}));
  REQUIRE(rt->drain(20s));
  rt->stop();
}

} // namespace

TEST_CASE("kept messages are sent again at start, and a target applies each once",
          "[messaging][kept]") {
  test_support::temp_dir dir;
  auto s = kept_settings(dir.sub("state"));
  {
    // As a run that died left it: "s" kept three messages to "t", and
    // "t"'s written state holds the first.
    auto st = kl::open_rocksdb_state_store(s.state_path);
    REQUIRE(st);
    state_record from;
    from.events = 3;
    from.sent = 3;
    for (uint64_t n = 1; n <= 3; ++n)
      from.outbox.push_back(kl::detail::kept_message{kl::key{"t"}, n, 0,
                                                     payload(10 + n)});
    from.state = encoded(seen{{1011, 1012, 1013}});
    state_record to;
    to.events = 1;
    to.receive(kl::key{"s"}, 1);
    to.state = encoded(seen{{11}});
    REQUIRE_FALSE((*st)->write(
      {{kl::key{"s"}, kl::detail::encode_state_record(from)},
       {kl::key{"t"}, kl::detail::encode_state_record(to)}},
      true));
  }
  run_until_drained(s);
  auto after = records(s.state_path);
  CHECK(state_of(after["t"]).got == std::vector<uint64_t>{11, 12, 13});
  CHECK(after["t"].received(kl::key{"s"}) == 3);
  CHECK(after["t"].events == 3);
  // "s" did not run: it still keeps them, and the next start sends them
  // again; "t" drops all three.
  CHECK(after["s"].outbox.size() == 3);
  run_until_drained(s);
  after = records(s.state_path);
  CHECK(state_of(after["t"]).got == std::vector<uint64_t>{11, 12, 13});
  CHECK(after["t"].events == 3);
}

TEST_CASE("a damaged record keeps no runtime from starting, and the "
          "others' kept messages are sent again",
          "[messaging][kept]") {
  test_support::temp_dir dir;
  auto s = kept_settings(dir.sub("state"));
  {
    auto st = kl::open_rocksdb_state_store(s.state_path);
    REQUIRE(st);
    state_record from;
    from.sent = 1;
    from.outbox.push_back(kl::detail::kept_message{kl::key{"t"}, 1, 0,
                                                   payload(21)});
    from.state = encoded(seen{{1021}});
    auto bad = kl::detail::encode_state_record(from);
    bad[bad.size() - 1] ^= 1; // its checksum no longer holds
    REQUIRE_FALSE((*st)->write(
      {{kl::key{"s"}, kl::detail::encode_state_record(from)},
       {kl::key{"x"}, bad}},
      true));
  }
  run_until_drained(s);
  auto st = kl::open_rocksdb_state_store(s.state_path, true);
  REQUIRE(st);
  auto t = (*st)->read(kl::key{"t"});
  REQUIRE(t);
  REQUIRE(*t);
  auto rec = kl::detail::decode_state_record(**t);
  REQUIRE(rec);
  CHECK(state_of(*rec).got == std::vector<uint64_t>{21});
}

TEST_CASE("a kept message leaves only once its sender's state is written",
          "[messaging][kept]") {
  test_support::temp_dir dir;
  for (bool kept : {true, false}) {
    INFO("messaging.exactly_once = " << kept);
    auto s = kept_settings(dir.sub(kept ? "on" : "off"));
    s.messaging_exactly_once = kept;
    s.state_checkpoint_ms = 300; // no write before the message, unless kept
    std::atomic<uint64_t> writes_before{~uint64_t{0}};
    relay_rt* self = nullptr;
    std::atomic<bool> ready{false};
    auto rt = start<relay_rt>(s, relays(), [&](relay_rt::event_type& e) {
      if (e.key() == kl::key{"t"} && ready.load())
        writes_before = self->stats().state_checkpoints;
    });
    self = rt.get();
    ready = true;
    REQUIRE(rt->submit("s", uint64_t{1007}));
    REQUIRE(rt->drain(20s));
    rt->stop();
    REQUIRE(writes_before.load() != ~uint64_t{0});
    if (kept)
      CHECK(writes_before.load() >= 1);
    else
      CHECK(writes_before.load() == 0);
    auto after = records(s.state_path);
    CHECK(state_of(after["t"]).got == std::vector<uint64_t>{7});
    CHECK(after["s"].sent == (kept ? 1u : 0u));
    CHECK(after["t"].received(kl::key{"s"}) == (kept ? 1u : 0u));
  }
}

TEST_CASE("kept messages from many senders reach their targets once each, in order",
          "[messaging][kept]") {
  test_support::temp_dir dir;
  auto s = kept_settings(dir.sub("state"));
  s.lane_linger_ms = 0; // senders retire and come back between their events
  std::vector<std::pair<std::string, uint64_t>> in;
  for (uint64_t i = 0; i < 200; ++i)
    in.emplace_back("s" + std::to_string(i % 20), 1000 + i);
  run_until_drained(s, in);
  auto after = records(s.state_path);
  auto got = state_of(after["t"]).got;
  REQUIRE(got.size() == 200);
  // Each sender's messages in its order; all of them, once.
  std::map<uint64_t, uint64_t> last;
  std::vector<uint64_t> sorted = got;
  std::sort(sorted.begin(), sorted.end());
  for (uint64_t i = 0; i < 200; ++i)
    CHECK(sorted[i] == i);
  for (auto v : got) {
    auto sender = v % 20;
    if (last.count(sender))
      CHECK(v > last[sender]);
    last[sender] = v;
  }
  for (uint64_t i = 0; i < 20; ++i)
    CHECK(after["t"].received(kl::key{"s" + std::to_string(i)}) == 10);
}

namespace {

// 1 sets a timer to itself that brings 2 after 300 ms; 3 sets one that
// would bring 4, and 5 cancels it. Every payload is kept in the state.
struct ticker : kl::stateful_handler<uint64_t, uint64_t, seen> {
  void on_event(uint64_t& p, kl::completion<uint64_t> done) override {
    state().got.push_back(p);
    if (p == 1 || p == 3) {
      if (tell_after(300ms, current_key(), p + 1, pending)
          != kl::errc::none)
        return done.fail("no timer");
    }
    if (p == 5 && !cancel_timer(pending))
      return done.fail("nothing to cancel");
    done.ok(p);
  }
  kl::timer_id pending{};
};

void run_for(const kl::settings& s, std::chrono::milliseconds d,
             const std::vector<std::pair<std::string, uint64_t>>& in = {}) {
  auto rt = start<relay_rt>(
    s, [](const kl::handler_params&) { return std::make_unique<ticker>(); },
    [](relay_rt::event_type&) {});
  for (auto& [k, p] : in)
    REQUIRE(rt->submit(k, uint64_t{p}));
  std::this_thread::sleep_for(d);
  REQUIRE(rt->drain(20s));
  rt->stop();
}

} // namespace

TEST_CASE("a timer a key sets for itself is kept with its state: it fires "
          "once, after a restart too, and a cancel is kept",
          "[messaging][kept][timer]") {
  test_support::temp_dir dir;
  auto s = kept_settings(dir.sub("state"));
  // Stopped before the timers are due: "k"'s is in its record; "c"
  // cancelled its own (a timer id names a timer in this process only).
  run_for(s, 50ms, {{"k", 1}, {"c", 3}, {"c", 5}});
  auto after = records(s.state_path);
  REQUIRE(after["k"].outbox.size() == 1);
  CHECK(after["k"].outbox[0].due_ms > 0);
  CHECK(after["c"].outbox.empty());
  CHECK(after["c"].sent == 1);
  // "k"'s fires in this run, once, and leaves the record with its effect.
  run_for(s, 600ms);
  after = records(s.state_path);
  CHECK(state_of(after["k"]).got == std::vector<uint64_t>{1, 2});
  CHECK(after["k"].outbox.empty());
  CHECK(state_of(after["c"]).got == std::vector<uint64_t>{3, 5});
  // Nothing fires again.
  run_for(s, 500ms);
  after = records(s.state_path);
  CHECK(state_of(after["k"]).got == std::vector<uint64_t>{1, 2});
  CHECK(state_of(after["c"]).got == std::vector<uint64_t>{3, 5});
}

TEST_CASE("without exactly_once a timer dies with the runtime",
          "[messaging][kept][timer]") {
  test_support::temp_dir dir;
  auto s = kept_settings(dir.sub("state"));
  s.messaging_exactly_once = false;
  run_for(s, 50ms, {{"k", 1}});
  run_for(s, 600ms);
  auto after = records(s.state_path);
  CHECK(state_of(after["k"]).got == std::vector<uint64_t>{1});
  CHECK(after["k"].outbox.empty());
}
