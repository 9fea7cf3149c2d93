// SPDX-License-Identifier: Apache-2.0
// The backlog's per-key slots: each key finds its own slot (many keys in a
// stripe, string and integer keys alike), a purge leaves the slot of a key
// with a lane or waiting as it was, and an unused one's key starts afresh.
#include <catch2/catch.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include <keylane/detail/backlog.hpp>

namespace keylane::detail {
// The key table alone sets routes; these tests of the storage set them
// directly.
struct slot_access {
  static void route(backlog::slot& s, uint64_t lane, uint32_t shard) {
    s.lane_ = lane;
    s.shard_ = shard;
  }
  static void hold(backlog::slot& s) { s.held_ = true; }
};
} // namespace keylane::detail

namespace kl = keylane;
using kl::detail::backlog;
using kl::detail::slot_access;

namespace {

const std::atomic<bool> not_cancelled{false};

// Admits one event of `k` and returns its count of unfinished events.
size_t admit_one(backlog& b, const kl::key& k) {
  size_t count = 0;
  bool ok = b.admit(k, false, backlog::no_deadline, not_cancelled, false,
                    [&](backlog::slot& s) { count = s.count(); });
  REQUIRE(ok);
  return count;
}

std::vector<kl::key> many_keys(size_t n) {
  std::vector<kl::key> keys;
  for (size_t i = 0; i < n; ++i) {
    if (i % 2 == 0)
      keys.emplace_back(uint64_t{i});
    else // long enough to leave the string's inline buffer
      keys.emplace_back("account-" + std::to_string(i) + "-of-the-ledger");
  }
  return keys;
}

} // namespace

TEST_CASE("each key keeps its own count while the table grows",
          "[unit][backlog]") {
  backlog b{1000};
  auto keys = many_keys(20000); // ~310 a stripe: the tables grow many times
  for (auto& k : keys)
    CHECK(admit_one(b, k) == 1);
  size_t counted = 0;
  for (auto& k : keys) // a second event of each key
    counted += admit_one(b, k) == 2;
  CHECK(counted == keys.size());
  // An integer key and a string key with the same text are two keys.
  CHECK(admit_one(b, kl::key{uint64_t{42}}) == 3); // one of the keys above
  CHECK(admit_one(b, kl::key{"42"}) == 1);
}

TEST_CASE("a purge takes only unused slots: a key with a lane or waiting "
          "keeps its route", "[unit][backlog]") {
  backlog b{1000};
  auto keys = many_keys(4000);
  // Every event given back; a third keep a lane, a third wait, the rest
  // have nothing left.
  for (size_t i = 0; i < keys.size(); ++i) {
    admit_one(b, keys[i]);
    b.release(keys[i], 1);
    b.locked(keys[i], [&](backlog::slot& s) {
      if (i % 3 == 0)
        slot_access::route(s, 1000 + i, 1);
      else if (i % 3 == 1)
        slot_access::hold(s);
    });
  }
  b.purge();
  for (size_t i = 0; i < 12000; ++i) // more purges on the way
    admit_one(b, kl::key{"fresh-" + std::to_string(i)});
  size_t kept = 0, fresh = 0, want_kept = 0;
  for (size_t i = 0; i < keys.size(); ++i) {
    b.locked(keys[i], [&](backlog::slot& s) {
      want_kept += i % 3 != 2;
      if (i % 3 == 0)
        kept += s.lane() == 1000 + i && s.shard() == 1 && !s.held();
      else if (i % 3 == 1)
        kept += s.held() && s.lane() == 0;
      else
        fresh += s.count() == 0 && s.lane() == 0 && !s.held();
    });
  }
  CHECK(kept == want_kept);
  CHECK(fresh == keys.size() - want_kept);
}

TEST_CASE("giving back a count lets a waiting submit of "
          "its key in", "[unit][backlog]") {
  backlog b{1};
  kl::key k{"acct-7"};
  admit_one(b, k);
  std::atomic<bool> in{false};
  std::thread t{[&] {
    bool ok = b.admit(k, true, backlog::no_deadline, not_cancelled, false,
                      [&](backlog::slot&) { in = true; });
    CHECK(ok);
  }};
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  CHECK_FALSE(in.load()); // the limit of one holds it back
  b.release(k, 1);
  t.join();
  CHECK(in.load());
  CHECK(b.locked(k, [](backlog::slot& s) { return s.count(); }) == 1);
}

TEST_CASE("every slot is visited once, under its own key, integer keys "
          "and string keys alike", "[unit][backlog]") {
  // A stop hands back the events waiting keys hold by walking every slot:
  // a slot it skipped, or named by the wrong key, would lose them.
  backlog b{1000};
  auto keys = many_keys(3000);
  for (size_t i = 0; i < keys.size(); ++i)
    for (size_t j = 0; j <= i % 3; ++j)
      admit_one(b, keys[i]);
  std::vector<size_t> seen(keys.size(), 0);
  size_t visits = 0;
  b.for_each([&](const kl::key& k, backlog::slot& s) {
    ++visits;
    // many_keys: even positions are the integers 0, 2, 4, ...; odd ones
    // strings that name their position.
    size_t i = k.is_integer() ? static_cast<size_t>(k.integer())
                              : std::stoul(k.str().substr(8));
    REQUIRE(i < keys.size());
    CHECK(keys[i] == k);
    CHECK(s.count() == i % 3 + 1);
    ++seen[i];
  });
  CHECK(visits == keys.size());
  CHECK(std::count(seen.begin(), seen.end(), size_t{1})
        == static_cast<std::ptrdiff_t>(keys.size()));
}
