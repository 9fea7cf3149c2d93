// SPDX-License-Identifier: Apache-2.0
// Property test of messages between keys: random graphs of tells and asks
// over random caps, lingers, asynchronous completions and failing attempts
// that are retried. Every message a successful attempt sent arrives exactly
// once (a failed attempt's never), the messages of one sending event reach
// one key in the order sent, and every event ends.

#include <random>

#include "messaging_support.hpp"
#include "property_support.hpp"

using namespace runtime_support;
using namespace messaging_support;

namespace {

uint64_t mix(uint64_t x, uint64_t salt) {
  x ^= salt * 0x9e3779b97f4a7c15ull;
  x ^= x >> 31;
  x *= 0xbf58476d1ce4e5b9ull;
  x ^= x >> 29;
  x *= 0x94d049bb133111ebull;
  return x ^ (x >> 32);
}

// What an event of `id` does: each an exact function of the id, so the
// test can tell which messages had to arrive.
struct plan {
  uint64_t seed;
  size_t keys;
  // Rounds with asks make no attempt fail: a retried attempt asks again
  // (an ask leaves at once), so its target would see the ask twice. And
  // only roots (hops 3) ask, so asks never form a cycle.
  bool with_asks;
  [[nodiscard]] int sends(const note& n) const {
    return n.hops > 0 ? int(mix(n.id, seed) % 4) : 0;
  }
  // Asks go to the upper half of the keys, where no event asks: an ask
  // waits behind what its target already has, and a target busy with its
  // own ask back to the asker (directly or round a cycle) would make both
  // wait until one times out (tests of their own check that).
  [[nodiscard]] std::string target(const note& n, int i) const {
    auto x = mix(n.id, seed + 1 + uint64_t(i));
    if (asks(n, i))
      return "k" + std::to_string(keys / 2 + x % (keys - keys / 2));
    return "k" + std::to_string(x % keys);
  }
  [[nodiscard]] uint64_t child(const note& n, int i) const {
    return mix(n.id, seed + 101 + uint64_t(i)) | 1u; // never 0
  }
  // Send i is an ask (its answer is awaited before the event ends).
  [[nodiscard]] bool asks(const note& n, int i) const {
    return with_asks && n.hops == 3
           && mix(n.id, seed + 201 + uint64_t(i)) % 3 == 0;
  }
  // Attempts that fail (after sending) before one succeeds.
  [[nodiscard]] uint32_t failing(const note& n) const {
    if (with_asks)
      return 0;
    return uint32_t(mix(n.id, seed + 301) % 7 == 0 ? 2
                    : mix(n.id, seed + 302) % 5 == 0 ? 1 : 0);
  }
  [[nodiscard]] bool later(const note& n) const {
    return mix(n.id, seed + 401) % 3 == 0;
  }
};

struct tally {
  std::mutex mtx;
  std::map<uint64_t, uint32_t> attempts;
  std::map<uint64_t, int> received; // child id -> times its first attempt ran
  // (origin, target) -> indices in arrival order
  std::map<std::pair<uint64_t, std::string>, std::vector<int>> arrivals;
};

void run_once(uint64_t seed, bool with_asks) {
  std::mt19937_64 rng{seed};
  plan p{seed, 2 + rng() % 12, with_asks};
  auto s = messaging_settings();
  // Asks too: an asked key starts past the cap, so askers that fill it
  // are still answered (an ask that times out is a fault here).
  s.max_active_keys = 1 + rng() % 8;
  s.lane_linger_ms = rng() % 2 == 0 ? 0 : rng() % 5;
  s.lane_batch = 1 + rng() % 8;
  s.max_attempts = 3;
  s.initial_backoff_ms = rng() % 2;
  s.order = rng() % 2 == 0 ? kl::order_mode::global : kl::order_mode::per_key;
  INFO("seed " << seed << " (rerun with KEYLANE_SEED=" << seed << "), asks "
               << with_asks << ", keys " << p.keys << ", cap " << s.max_active_keys << ", linger "
               << s.lane_linger_ms);
  tally t;
  auto rt = launch(s, script([&](script_handler& h, note& n,
                                 kl::completion<int> done) {
    uint32_t attempt;
    {
      std::lock_guard<std::mutex> guard{t.mtx};
      attempt = ++t.attempts[n.id];
      if (attempt == 1 && !n.from.empty()) {
        ++t.received[n.id];
        t.arrivals[{n.origin, h.current_key().to_string()}].push_back(n.index);
      }
    }
    auto fails = attempt <= p.failing(n);
    auto shared = std::make_shared<kl::completion<int>>(std::move(done));
    auto pending = std::make_shared<int>(1); // the event's own step
    auto step = [shared, pending, fails] {
      if (--*pending == 0) {
        if (fails)
          shared->fail("planned failure");
        else
          shared->ok(1);
      }
    };
    auto me = h.current_key().to_string();
    for (int i = 0; i < p.sends(n); ++i) {
      note m{p.child(n, i), n.hops - 1, me, n.id, i};
      if (p.asks(n, i)) {
        ++*pending;
        expect_none(h.ask(p.target(n, i), std::move(m), 10s,
                          [step](caf::expected<int> a) {
                            if (!a)
                              fault("ask answered " + kl::render(a.error()));
                            step();
                          }));
      } else {
        expect_none(h.tell(p.target(n, i), std::move(m)));
      }
    }
    if (p.later(n))
      h.run_later(std::chrono::microseconds(mix(n.id, seed) % 500), step);
    else
      step();
  }));
  const uint64_t outside = 200;
  std::vector<note> roots;
  for (uint64_t i = 0; i < outside; ++i) {
    // Hops 3 only for askers in rounds with asks.
    roots.emplace_back(mix(i, seed + 999) | 1u,
                       int(1 + rng() % (with_asks ? 2 : 3)));
    auto k = rng() % p.keys;
    if (with_asks && i % 2 == 0) {
      roots.back().hops = 3; // an asker: on the lower half of the keys
      k %= p.keys / 2;
    }
    REQUIRE(rt->submit("k" + std::to_string(k), roots.back()));
  }
  REQUIRE(rt->drain(60s));
  auto st = rt->stats();
  CHECK(st.messages_in_flight == 0);
  CHECK(st.failed == 0);
  CHECK(st.ask_timeouts == 0);
  // Which messages had to arrive: every send of every event, from the
  // roots down (each event ends ok in the end).
  std::map<uint64_t, int> expected;
  std::map<std::pair<uint64_t, std::string>, int> per_pair;
  std::vector<note> todo = roots;
  while (!todo.empty()) {
    auto n = todo.back();
    todo.pop_back();
    for (int i = 0; i < p.sends(n); ++i) {
      note m{p.child(n, i), n.hops - 1, "x", n.id, i};
      ++expected[m.id];
      ++per_pair[{n.id, p.target(n, i)}];
      todo.push_back(m);
    }
  }
  std::lock_guard<std::mutex> guard{t.mtx};
  CHECK(t.received == expected);
  CHECK(st.messages_sent == [&] {
    uint64_t total = 0;
    for (auto& [id, c] : expected)
      total += uint64_t(c);
    return total;
  }());
  for (auto& [pair, idx] : t.arrivals) {
    INFO("from event " << pair.first << " to " << pair.second);
    CHECK(idx.size() == size_t(per_pair[pair]));
    // An event's tells leave together when it ends, in the order made; its
    // asks leave at once, ahead of them.
    std::vector<int> tells;
    for (auto i : idx)
      if (!p.asks(note{pair.first, 3}, i))
        tells.push_back(i);
    CHECK(std::is_sorted(tells.begin(), tells.end()));
  }
}

} // namespace

TEST_CASE("random graphs of tells and asks arrive exactly once, in order per sending event and target, and nothing sticks",
          "[messaging][property]") {
  fault_check faults;
  auto seed = keylane::test::test_seed();
  for (int round = 0; round < 8; ++round)
    run_once(seed + uint64_t(round), round % 2 == 1);
}
