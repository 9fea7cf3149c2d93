// SPDX-License-Identifier: Apache-2.0
// Retire claims: while keys wait for a slot of the full cap, shards retire
// idle lanes for them, one claimed retire per waiting key — never two for
// one key, and never fewer shards than waiting keys need; and a shard with
// idle lanes is asked whenever the cap is full while keys wait. On the key
// table alone (no actors: its wake-ups go to no one), with each shard's
// retires as a `retire_round`, so each step is deterministic.
#include <map>
#include <set>

#include <catch2/catch.hpp>

#include <keylane/config.hpp>
#include <keylane/detail/inboxes.hpp>
#include <keylane/detail/key_table.hpp>

namespace kl = keylane;
using kl::detail::event_base;
using kl::detail::event_ptr;
using kl::detail::key_table;
using round_t = kl::detail::key_table::retire_round;
using verdict = kl::detail::key_table::verdict;

namespace {

const std::atomic<bool> not_cancelled{false};

kl::key key_no(uint64_t i) { return kl::key{i}; }

struct fixture {
  kl::detail::inboxes boxes{/*shards*/ 2};
  key_table t{kl::unbounded, /*cap*/ 2, boxes};
  std::map<uint64_t, uint64_t> lane_of; // key number -> its lane
  std::map<uint64_t, size_t> shard_of;  // key number -> its lane's shard

  fixture() {
    // Two live lanes fill the cap: key 1's on shard 0, key 2's on shard 1.
    submit(key_no(1));
    submit(key_no(2));
    REQUIRE(t.active() == 2);
    take_inboxes();
    REQUIRE(shard_of.at(1) == 0);
    REQUIRE(shard_of.at(2) == 1);
  }
  ~fixture() {
    t.close();
    t.take_all_held(); // frees every event still held or queued
    boxes.detach_all();
  }

  void submit(const kl::key& k) {
    key_table::arrival a{false, false, false, false, not_cancelled};
    REQUIRE(t.admit(k, a, [](kl::detail::inbox_item&) {},
                    [&] { return event_ptr{new event_base(k)}; }));
  }

  // Takes what the shards were sent, noting each key's lane and shard.
  void take_inboxes() {
    kl::detail::inbox_item items[16];
    for (size_t s = 0; s < boxes.shard_count(); ++s) {
      auto n = boxes.take_shard(s, items, 16);
      for (size_t i = 0; i < n; ++i) {
        auto ev = boxes.open(items[i]);
        lane_of[ev->k.integer()] = ev->lane;
        shard_of[ev->k.integer()] = s;
      }
    }
  }

  // Key `i`'s lane retires through `r`, having finished `done` events.
  verdict retire(round_t& r, uint64_t i, size_t done = 1) {
    bool erased = false;
    auto v = r.retire(key_no(i), lane_of.at(i), done, [&] { erased = true; });
    CHECK(erased == (v != verdict::stays));
    return v;
  }

  // Keys 3 and 4 begin to wait for the full cap, in that order.
  void two_keys_wait() {
    submit(key_no(3));
    submit(key_no(4));
    REQUIRE(t.waiting() == 2);
  }
};

} // namespace

TEST_CASE("with two keys waiting for the full cap, two shards may each "
          "claim a retire, and a third may not",
          "[lane][cap]") {
  fixture f;
  f.two_keys_wait();
  round_t r0{f.t, 0}, r1{f.t, 1}, r2{f.t, 0};
  CHECK(r0.wanted());       // shard 0, for key 3
  CHECK(r1.wanted());       // shard 1, for key 4: not held back
  CHECK_FALSE(r2.wanted()); // both waiting keys are covered
  // Shard 0's lane stays (an event of key 1 arrived): its claim ends, and
  // one key is uncovered again.
  f.submit(key_no(1));
  CHECK(f.retire(r0, 1) == verdict::stays);
  CHECK(r2.wanted());
}

TEST_CASE("with one key waiting for the full cap, only one shard may claim "
          "a retire",
          "[lane][cap]") {
  fixture f;
  f.submit(key_no(3));
  REQUIRE(f.t.waiting() == 1);
  round_t r0{f.t, 0}, r1{f.t, 1};
  CHECK(r0.wanted());
  CHECK_FALSE(r1.wanted()); // two retires for one key: the cap would be
                            // left half used
  f.submit(key_no(1));
  CHECK(f.retire(r0, 1) == verdict::stays);
  CHECK(r1.wanted());
}

TEST_CASE("no retire is claimed while no key waits, or while a slot is "
          "free for the waiting key",
          "[lane][cap]") {
  fixture f;
  {
    round_t r{f.t, 1};
    CHECK_FALSE(r.wanted()); // cap full, nobody waits
  }
  f.submit(key_no(3));
  REQUIRE(f.t.waiting() == 1);
  {
    // A lane retired past its linger and gave its slot back; the key is
    // not admitted yet (the round has not ended). That slot is the key's:
    // retiring another lane for it would leave the cap half used.
    round_t r0{f.t, 0};
    CHECK(f.retire(r0, 1) == verdict::gone);
    round_t r1{f.t, 1};
    CHECK_FALSE(r1.wanted());
  } // r0 ends: it admits key 3
  CHECK(f.t.waiting() == 0);
  CHECK(f.t.active() == 2);
  round_t r{f.t, 1};
  CHECK_FALSE(r.wanted());
}

TEST_CASE("a shard that stood back while a retired lane's slot was being "
          "handed on is asked again once the cap is full and keys still "
          "wait",
          "[lane][cap]") {
  fixture f;
  f.two_keys_wait();
  CHECK_FALSE(f.boxes.reclaim_asked(1)); // no shard had idle lanes to give
  {
    // Shard 0 retires key 1's lane; before it hands the slot on, shard 1
    // publishes its idle lane and looks: a slot is free, so it keeps it.
    round_t r0{f.t, 0};
    CHECK(f.retire(r0, 1) == verdict::gone);
    CHECK_FALSE(f.t.idle_lanes(1, 1));
  } // shard 0 admits key 3; key 4 still waits and the cap is full again:
    // without a new question, shard 1's idle lane stays for its linger
  CHECK(f.t.waiting() == 1);
  CHECK(f.t.active() == 2);
  CHECK(f.boxes.reclaim_asked(1));
  CHECK_FALSE(f.boxes.reclaim_asked(0)); // it published no idle lane
  CHECK(f.t.idle_lanes(1, 1));           // a slot is wanted
}

TEST_CASE("a retire for a waiting key hands its slot of the cap straight to "
          "the oldest waiting key, and gives it back when none waits",
          "[lane][cap]") {
  fixture f;
  f.two_keys_wait();
  {
    // Shard 0 claims a retire for key 3, retires key 1's lane and keeps
    // its slot: the cap stays full, so shard 1 need not stand back and may
    // claim one for key 4 at once, but not a third.
    round_t r0{f.t, 0};
    CHECK(r0.wanted());
    CHECK(f.retire(r0, 1) == verdict::gone);
    CHECK(f.t.active() == 2);
    CHECK(f.t.idle_lanes(1, 1)); // a slot is still wanted
    round_t r1{f.t, 1}, r2{f.t, 0};
    CHECK(r1.wanted());
    CHECK_FALSE(r2.wanted());
    // Shard 1's lane stays (an event came): its claim ends.
    f.submit(key_no(2));
    CHECK(f.retire(r1, 2) == verdict::stays);
  } // shard 0 hands its slot to key 3
  CHECK(f.t.waiting() == 1); // key 4 waits on: the cap is full again
  CHECK(f.t.active() == 2);
  // Key 3's lane went to shard 0 (one lane fewer), with its event.
  f.take_inboxes();
  REQUIRE(f.lane_of.count(3) == 1);
  CHECK(f.shard_of.at(3) == 0);
  {
    // Shard 1 claims a retire for key 4; meanwhile shard 0 retires key 3's
    // lane past its linger, and that freed slot admits key 4 first.
    round_t r1{f.t, 1};
    CHECK(r1.wanted());
    {
      round_t r0{f.t, 0};
      CHECK(f.retire(r0, 3) == verdict::gone);
    }
    CHECK(f.t.waiting() == 0);
    CHECK(f.t.active() == 2);
    // Shard 1's claimed retire keeps a slot no key waits for any more.
    CHECK(f.retire(r1, 2) == verdict::gone);
    CHECK(f.t.active() == 2);
  } // it goes back to the cap
  CHECK(f.t.active() == 1);
  f.take_inboxes();
  CHECK(f.lane_of.count(4) == 1);
}

TEST_CASE("lane ids are unique across the backlog's stripes and never 0",
          "[lane][cap]") {
  kl::detail::backlog b{kl::unbounded};
  std::set<uint64_t> seen;
  for (uint64_t i = 0; i < 2000; ++i) {
    kl::key k{i % 300};
    auto id = b.locked(k, [&](kl::detail::backlog::slot&) {
      return b.name_lane(k);
    });
    CHECK(id != 0);
    CHECK(seen.insert(id).second);
  }
}
