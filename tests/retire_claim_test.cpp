// SPDX-License-Identifier: Apache-2.0
// Retire claims: while keys wait for a slot of the full cap, shards retire
// idle lanes for them, one claimed retire per waiting key — never two for
// one key, and never fewer shards than waiting keys need; and a shard with
// idle lanes is asked whenever the cap is full while keys wait. On the
// ingress alone (no actors: its wake-ups go to no one), so each step is
// deterministic.
#include <set>

#include <catch2/catch.hpp>

#include <keylane/config.hpp>
#include <keylane/detail/ingress.hpp>
#include <keylane/detail/waiter.hpp>

namespace kl = keylane;
using kl::detail::event_base;
using kl::detail::event_ptr;
using kl::detail::ingress;

namespace {

struct fixture {
  kl::detail::waiter w;
  ingress in{kl::unbounded, 1000, /*shards*/ 2, /*cap*/ 2, w};

  fixture() {
    // Two live lanes fill the cap.
    submit(kl::key{uint64_t{1}});
    submit(kl::key{uint64_t{2}});
    REQUIRE(in.active() == 2);
  }
  ~fixture() { in.detach_all(); } // frees every event it still holds

  void submit(const kl::key& k) {
    auto make = [](void* ctx) {
      return event_ptr{new event_base(*static_cast<const kl::key*>(ctx))};
    };
    auto key_copy = k;
    REQUIRE(in.submit(k, make, &key_copy, false).code == kl::errc::none);
  }

  // Keys 3 and 4 begin to wait for the full cap, in that order.
  void two_keys_wait() {
    submit(kl::key{uint64_t{3}});
    submit(kl::key{uint64_t{4}});
    REQUIRE(in.waiting() == 2);
  }
};

} // namespace

TEST_CASE("with two keys waiting for the full cap, two shards may each "
          "claim a retire, and a third may not",
          "[lane][cap]") {
  fixture f;
  f.two_keys_wait();
  CHECK(f.in.claim_retire());       // shard 0, for key 3
  CHECK(f.in.claim_retire());       // shard 1, for key 4: not held back
  CHECK_FALSE(f.in.claim_retire()); // both waiting keys are covered
  f.in.end_retire_claim();
  CHECK(f.in.claim_retire()); // a claim ended: one key is uncovered again
  f.in.end_retire_claim();
  f.in.end_retire_claim();
}

TEST_CASE("with one key waiting for the full cap, only one shard may claim "
          "a retire",
          "[lane][cap]") {
  fixture f;
  f.submit(kl::key{uint64_t{3}});
  REQUIRE(f.in.waiting() == 1);
  CHECK(f.in.claim_retire());
  CHECK_FALSE(f.in.claim_retire()); // two retires for one key: the cap
                                    // would be left half used
  f.in.end_retire_claim();
  CHECK(f.in.claim_retire());
  f.in.end_retire_claim();
}

TEST_CASE("no retire is claimed while no key waits, or while a slot is "
          "free for the waiting key",
          "[lane][cap]") {
  fixture f;
  CHECK_FALSE(f.in.claim_retire()); // cap full, nobody waits
  f.submit(kl::key{uint64_t{3}});
  REQUIRE(f.in.waiting() == 1);
  // A lane retired and gave its slot back; the key is not admitted yet.
  // That slot is the key's: retiring another lane for it would leave the
  // cap half used.
  f.in.lane_gone(0, false);
  CHECK_FALSE(f.in.claim_retire());
  f.in.admit_waiting();
  CHECK(f.in.waiting() == 0);
  CHECK(f.in.active() == 2);
  CHECK_FALSE(f.in.claim_retire());
}

TEST_CASE("a shard that stood back while a retired lane's slot was being "
          "handed on is asked again once the cap is full and keys still "
          "wait",
          "[lane][cap]") {
  fixture f; // key 1's lane on shard 0, key 2's on shard 1
  f.two_keys_wait();
  CHECK_FALSE(f.in.reclaim_asked(1)); // no shard had idle lanes to give
  // Shard 0 retires key 1's lane; before it hands the slot on, shard 1
  // publishes its idle lane and looks: a slot is free, so it keeps it.
  f.in.lane_gone(0, false);
  f.in.note_idle_lanes(1, 1);
  REQUIRE_FALSE(f.in.slot_wanted());
  // Shard 0 admits key 3; key 4 still waits and the cap is full again:
  // without a new question, shard 1's idle lane stays for its linger.
  f.in.admit_waiting();
  CHECK(f.in.waiting() == 1);
  CHECK(f.in.active() == 2);
  CHECK(f.in.slot_wanted());
  CHECK(f.in.reclaim_asked(1));
  CHECK_FALSE(f.in.reclaim_asked(0)); // it published no idle lane
}

TEST_CASE("a retire for a waiting key hands its slot of the cap straight to "
          "the oldest waiting key, and gives it back when none waits",
          "[lane][cap]") {
  fixture f; // key 1's lane on shard 0, key 2's on shard 1
  f.two_keys_wait();
  // Shard 0 claims a retire for key 3, retires key 1's lane and keeps its
  // slot: the cap stays full, so shard 1 need not stand back and may claim
  // one for key 4 at once, but not a third.
  CHECK(f.in.claim_retire());
  f.in.lane_gone(0, true);
  CHECK(f.in.active() == 2);
  CHECK(f.in.slot_wanted());
  CHECK(f.in.claim_retire());
  CHECK_FALSE(f.in.claim_retire());
  f.in.end_retire_claim();
  f.in.admit_waiting(true);
  f.in.end_retire_claim();
  CHECK(f.in.waiting() == 1); // key 4 waits on: the cap is full again
  CHECK(f.in.active() == 2);
  // Key 3's lane went to shard 0 (one lane fewer), with its event.
  keylane::detail::inbox_item inbox[8];
  auto n = f.in.dequeue_inbox(0, inbox, 8);
  bool key3 = false;
  for (size_t i = 0; i < n; ++i) {
    auto ev = f.in.open(inbox[i]);
    key3 = key3 || ev->k == kl::key{uint64_t{3}};
  }
  CHECK(key3);
  // Key 4 is admitted with the next retire's slot; a slot held when no
  // key waits goes back to the cap.
  f.in.lane_gone(1, true);
  f.in.admit_waiting(true);
  CHECK(f.in.waiting() == 0);
  CHECK(f.in.active() == 2);
  f.in.lane_gone(0, true);
  f.in.admit_waiting(true);
  CHECK(f.in.active() == 1);
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
