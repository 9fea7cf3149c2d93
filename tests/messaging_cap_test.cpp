// SPDX-License-Identifier: Apache-2.0
// An asker holds its slot of `max_active_keys` until answered, so the key
// it asks starts past the cap: askers that fill the cap never wait for
// their own targets.

#include <atomic>
#include <memory>

#include "messaging_support.hpp"

using namespace runtime_support;
using namespace messaging_support;

TEST_CASE("askers that fill the cap are answered: the asked key starts "
          "past the cap",
          "[messaging][ask][cap]") {
  fault_check faults;
  outputs out;
  auto s = messaging_settings();
  s.max_active_keys = 2;
  s.lane_linger_ms = 0;
  // Askers ask only once all six are in: an ask made before the second
  // buyer was admitted would find a free slot for "price" (a shard can run
  // ahead of the submitting thread), and nothing would go past the cap.
  std::atomic<bool> all_in{false};
  auto rt = launch(s, script([&](script_handler& h, note& n,
                                 kl::completion<int> done) {
    if (h.current_key() == kl::key{"price"})
      return done.ok(int(n.id) * 10);
    auto shared = std::make_shared<kl::completion<int>>(std::move(done));
    when_set(h, all_in, [&h, shared, id = n.id] {
      expect_none(h.ask("price", note{id}, 2s,
                        [shared](caf::expected<int> r) {
                          if (r)
                            shared->ok(*r + 1);
                          else
                            shared->fail(kl::render(r.error()));
                        }));
    });
  }), &out);
  // Six askers for two slots: the first two take them and ask while the
  // other four wait, so "price" finds the cap full and keys waiting.
  for (uint64_t id = 1; id <= 6; ++id)
    REQUIRE(rt->submit("buyer" + std::to_string(id), note{id}));
  all_in = true;
  REQUIRE(rt->drain(20s));
  auto res = out.results_of_prefix("buyer");
  REQUIRE(res.size() == 6);
  for (auto& [id, r] : res)
    CHECK(r == int(id) * 10 + 1);
  auto st = rt->stats();
  CHECK(st.ask_timeouts == 0);
  CHECK(st.peak_active_lanes == 3); // the two askers and "price"
}

TEST_CASE("an ask to a key that waits for a slot starts it, its waiting "
          "events first, and the cap comes back",
          "[messaging][ask][cap]") {
  fault_check faults;
  journal seen;
  auto s = messaging_settings();
  s.max_active_keys = 1;
  s.lane_linger_ms = 0;
  std::atomic<bool> b_waits{false};
  auto rt = launch(s, script([&](script_handler& h, note& n,
                                 kl::completion<int> done) {
    if (h.current_key() != kl::key{"a"}) {
      seen.add(h.current_key(), n);
      return done.ok(int(n.id));
    }
    // "a" holds the only slot until "b" waits behind it, then asks "b".
    auto shared = std::make_shared<kl::completion<int>>(std::move(done));
    when_set(h, b_waits, [&h, shared] {
      expect_none(h.ask("b", note{2}, 2s,
                        [shared](caf::expected<int> r) {
                          if (r)
                            shared->ok(*r);
                          else
                            shared->fail(kl::render(r.error()));
                        }));
    });
  }));
  REQUIRE(rt->submit("a", note{0}));
  REQUIRE(rt->submit("b", note{1})); // the cap is full: "b" waits
  b_waits = true;
  REQUIRE(rt->drain(20s));
  auto b = seen.of("b");
  REQUIRE(b.size() == 2);
  CHECK(b[0].id == 1); // the event that waited, then the ask
  CHECK(b[1].id == 2);
  auto st = rt->stats();
  CHECK(st.ask_timeouts == 0);
  CHECK(st.peak_active_lanes == 2);
  // The key's entry left in the queue of waiting keys gives its slot back:
  // two more keys still start, one at a time, and nothing stays active.
  REQUIRE(rt->submit("c", note{3}));
  REQUIRE(rt->submit("d", note{4}));
  REQUIRE(rt->drain(20s));
  CHECK(seen.of("c").size() == 1);
  CHECK(seen.of("d").size() == 1);
  CHECK(rt->stats().peak_active_lanes == 2);
}
