// SPDX-License-Identifier: Apache-2.0
#include <catch2/catch.hpp>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <numeric>
#include <random>
#include <set>
#include <utility>
#include <vector>

#include "keylane/detail/reorder_buffer.hpp"

#include "property_support.hpp"

namespace kl = keylane;
namespace kd = keylane::detail;
namespace kt = keylane::test;

namespace {

/// A move-only item that counts live instances, so a leak or a double
/// destruction shows.
struct item {
  static inline std::atomic<int64_t> live{0};

  item(uint64_t seq, kl::key k)
    : seq(seq), k(std::move(k)), body(std::make_unique<uint64_t>(seq)) {
    ++live;
  }
  item(item&& x) noexcept
    : seq(x.seq), k(std::move(x.k)), body(std::move(x.body)) {
    ++live;
  }
  item& operator=(item&&) = delete;
  ~item() { --live; }

  uint64_t seq;
  kl::key k;
  std::unique_ptr<uint64_t> body; // null once moved from
};

/// 0 .. n-1 in a random order.
std::vector<uint64_t> permutation(std::mt19937_64& rng, size_t n) {
  std::vector<uint64_t> xs(n);
  std::iota(xs.begin(), xs.end(), uint64_t{0});
  std::shuffle(xs.begin(), xs.end(), rng);
  return xs;
}

/// 0 .. n-1 where no number comes `ahead` or more places before its turn:
/// blocks of `ahead` numbers, each shuffled, as a bounded window allows.
std::vector<uint64_t> windowed(std::mt19937_64& rng, size_t n, size_t ahead) {
  std::vector<uint64_t> xs(n);
  std::iota(xs.begin(), xs.end(), uint64_t{0});
  for (size_t i = 0; i < n; i += ahead)
    std::shuffle(xs.begin() + i, xs.begin() + std::min(n, i + ahead), rng);
  return xs;
}

/// What a global buffer must report: the awaited number is the lowest one
/// not released; every number in `in` is held.
struct global_model {
  std::set<uint64_t> in;
  uint64_t next = 0;
  size_t peak = 0;

  /// Releases the numbers from `next` up to the first missing one.
  void settle() {
    while (in.count(next))
      in.erase(next++);
  }

  /// As `arrive` does it: an item released at once never counts as held.
  void arrive(uint64_t seq) {
    in.insert(seq);
    settle();
    peak = std::max(peak, in.size());
  }
};

} // namespace

TEST_CASE("a global reorder buffer releases every item in sequence order, "
          "whatever order they arrive in",
          "[reorder][property]") {
  auto seed = kt::test_seed();
  INFO("seed " << seed << " (rerun with KEYLANE_SEED=" << seed << ")");
  std::mt19937_64 rng{seed};
  for (int round = 0; round < 50; ++round) {
    auto n = std::uniform_int_distribution<size_t>{1, 3000}(rng);
    auto ahead = std::uniform_int_distribution<size_t>{1, 64}(rng);
    auto order = round % 2 == 0 ? permutation(rng, n) : windowed(rng, n, ahead);
    INFO("round " << round << ", " << n << " items");
    {
      kd::reorder_buffer<item> buf{kl::order_mode::global};
      global_model model;
      std::vector<item> out;
      for (auto seq : order) {
        buf.arrive(seq, item{seq, kl::key{seq % 7}}, out);
        model.arrive(seq);
        REQUIRE(buf.next() == model.next);
        REQUIRE(out.size() == model.next);
        REQUIRE(buf.held() == model.in.size());
        REQUIRE(buf.peak() == model.peak);
      }
      REQUIRE(buf.held() == 0);
      REQUIRE(out.size() == n);
      for (uint64_t i = 0; i < n; ++i) {
        REQUIRE(out[i].seq == i);
        REQUIRE(out[i].body);
        REQUIRE(*out[i].body == i);
      }
      if (round % 2 == 1)
        REQUIRE(buf.peak() < ahead);
    }
    REQUIRE(item::live == 0);
  }
}

TEST_CASE("a reorder buffer releases an item that arrives in its turn "
          "without counting it as held",
          "[reorder]") {
  kd::reorder_buffer<item> buf{kl::order_mode::global};
  std::vector<item> out;
  for (uint64_t seq = 0; seq < 100; ++seq)
    buf.arrive(seq, item{seq, kl::key{1}}, out);
  REQUIRE(out.size() == 100);
  REQUIRE(buf.next() == 100);
  REQUIRE(buf.held() == 0);
  REQUIRE(buf.peak() == 0);
}

TEST_CASE("a reorder buffer's put holds a batch, awaited number included, "
          "until release releases its ready prefix",
          "[reorder][property]") {
  auto seed = kt::test_seed();
  INFO("seed " << seed << " (rerun with KEYLANE_SEED=" << seed << ")");
  std::mt19937_64 rng{seed};
  for (int round = 0; round < 50; ++round) {
    auto n = std::uniform_int_distribution<size_t>{1, 2000}(rng);
    auto order = permutation(rng, n);
    INFO("round " << round << ", " << n << " items");
    kd::reorder_buffer<item> buf{kl::order_mode::global};
    global_model model;
    std::vector<item> out;
    size_t peak = 0;
    for (size_t i = 0; i < n;) {
      auto len = std::uniform_int_distribution<size_t>{1, 40}(rng);
      auto end = std::min(n, i + len);
      for (; i < end; ++i) {
        buf.put(order[i], item{order[i], kl::key{order[i]}});
        model.in.insert(order[i]);
      }
      // Nothing leaves before release: the peak counts the whole batch.
      REQUIRE(buf.held() == model.in.size());
      REQUIRE(buf.next() == model.next);
      peak = std::max(peak, model.in.size());
      REQUIRE(buf.peak() == peak);
      auto before = out.size();
      auto n_out = buf.release(out);
      model.settle();
      REQUIRE(n_out == out.size() - before);
      REQUIRE(buf.next() == model.next);
      REQUIRE(out.size() == model.next);
      REQUIRE(buf.held() == model.in.size());
    }
    REQUIRE(buf.held() == 0);
    REQUIRE(buf.release(out) == 0);
    for (uint64_t i = 0; i < n; ++i)
      REQUIRE(out[i].seq == i);
  }
  REQUIRE(item::live == 0);
}

TEST_CASE("a reorder buffer's skip moves past numbers kept elsewhere, and "
          "output stays in sequence order",
          "[reorder][property]") {
  // As the sink does with its spill file: some numbers never enter the
  // buffer; when one is awaited, the owner skips it and emits it itself.
  auto seed = kt::test_seed();
  INFO("seed " << seed << " (rerun with KEYLANE_SEED=" << seed << ")");
  std::mt19937_64 rng{seed};
  for (int round = 0; round < 50; ++round) {
    auto n = std::uniform_int_distribution<size_t>{1, 2000}(rng);
    auto share = std::uniform_real_distribution<double>{0.0, 1.0}(rng);
    auto order = permutation(rng, n);
    INFO("round " << round << ", " << n << " items, " << share
                  << " kept elsewhere");
    kd::reorder_buffer<item> buf{kl::order_mode::global};
    std::set<uint64_t> elsewhere;
    std::set<uint64_t> in;
    std::vector<item> out;
    size_t skips = 0;
    size_t kept_away = 0;
    std::bernoulli_distribution away{share};
    for (auto seq : order) {
      if (away(rng)) {
        elsewhere.insert(seq);
        ++kept_away;
      } else {
        buf.put(seq, item{seq, kl::key{seq}});
        in.insert(seq);
      }
      REQUIRE(buf.held() == in.size());
      for (;;) {
        auto before = out.size();
        buf.release(out);
        for (auto j = before; j < out.size(); ++j)
          REQUIRE(in.erase(out[j].seq) == 1);
        if (!elsewhere.count(buf.next()))
          break;
        auto seq_away = buf.next();
        elsewhere.erase(seq_away);
        buf.skip();
        ++skips;
        REQUIRE(buf.next() == seq_away + 1);
        out.push_back(item{seq_away, kl::key{seq_away}});
      }
      REQUIRE(buf.held() == in.size());
      REQUIRE(buf.next() == out.size());
    }
    REQUIRE(elsewhere.empty());
    REQUIRE(skips == kept_away);
    REQUIRE(buf.held() == 0);
    REQUIRE(out.size() == n);
    for (uint64_t i = 0; i < n; ++i)
      REQUIRE(out[i].seq == i);
  }
  REQUIRE(item::live == 0);
}

TEST_CASE("a per_key reorder buffer releases each key's items in sequence "
          "order and holds only those whose key waits",
          "[reorder][property]") {
  auto seed = kt::test_seed();
  INFO("seed " << seed << " (rerun with KEYLANE_SEED=" << seed << ")");
  std::mt19937_64 rng{seed};
  for (int round = 0; round < 50; ++round) {
    auto n = std::uniform_int_distribution<size_t>{1, 2000}(rng);
    auto keys = std::uniform_int_distribution<uint64_t>{1, 30}(rng);
    INFO("round " << round << ", " << n << " items, " << keys << " keys");
    std::vector<uint64_t> key_of(n);
    for (auto& k : key_of)
      k = std::uniform_int_distribution<uint64_t>{0, keys - 1}(rng);
    auto order = permutation(rng, n);
    {
      kd::reorder_buffer<item> buf{kl::order_mode::per_key};
      for (uint64_t seq = 0; seq < n; ++seq)
        buf.expect(seq, kl::key{key_of[seq]});
      // The model: a key's items leave once all its lower numbers arrived.
      std::map<uint64_t, std::set<uint64_t>> pending; // key -> not released
      for (uint64_t seq = 0; seq < n; ++seq)
        pending[key_of[seq]].insert(seq);
      std::set<uint64_t> arrived;
      size_t peak = 0;
      std::vector<item> out;
      for (auto seq : order) {
        buf.arrive(seq, item{seq, kl::key{key_of[seq]}}, out);
        arrived.insert(seq);
        auto& mine = pending[key_of[seq]];
        while (!mine.empty() && arrived.count(*mine.begin())) {
          arrived.erase(*mine.begin());
          mine.erase(mine.begin());
        }
        REQUIRE(buf.held() == arrived.size());
        peak = std::max(peak, arrived.size());
        REQUIRE(buf.peak() == peak);
      }
      REQUIRE(buf.held() == 0);
      REQUIRE(out.size() == n);
      std::map<uint64_t, uint64_t> last; // key -> last seq + 1 seen
      std::set<uint64_t> seen;
      for (auto& x : out) {
        auto k = key_of[x.seq];
        REQUIRE(x.k == kl::key{k});
        REQUIRE(last[k] <= x.seq);
        last[k] = x.seq + 1;
        REQUIRE(seen.insert(x.seq).second);
      }
    }
    REQUIRE(item::live == 0);
  }
}

TEST_CASE("a reorder buffer with order none releases items as they come "
          "and holds nothing",
          "[reorder]") {
  std::mt19937_64 rng{kt::test_seed()};
  auto order = permutation(rng, 500);
  kd::reorder_buffer<item> buf{kl::order_mode::none};
  std::vector<item> out;
  for (auto seq : order)
    buf.arrive(seq, item{seq, kl::key{seq}}, out);
  REQUIRE(out.size() == order.size());
  for (size_t i = 0; i < order.size(); ++i)
    REQUIRE(out[i].seq == order[i]);
  REQUIRE(buf.held() == 0);
  REQUIRE(buf.peak() == 0);
}

namespace {

/// An event as the sink holds it: a raw pointer, its key in `k`.
struct raw_event {
  uint64_t seq;
  kl::key k;
};

/// A key kept apart from the item, to show `KeyOf` is used.
struct second_key {
  const kl::key& operator()(const std::pair<uint64_t, kl::key>& x) const {
    return x.second;
  }
};

} // namespace

TEST_CASE("a reorder buffer holds raw pointers without owning them and "
          "drain hands back every held one in sequence order",
          "[reorder]") {
  std::vector<std::unique_ptr<raw_event>> owned;
  for (uint64_t seq = 0; seq < 10; ++seq)
    owned.push_back(
      std::make_unique<raw_event>(raw_event{seq, kl::key{seq % 3}}));

  SECTION("global") {
    kd::reorder_buffer<raw_event*> buf{kl::order_mode::global};
    std::vector<raw_event*> out;
    for (uint64_t seq : {3, 1, 0, 7, 5, 9})
      buf.put(seq, owned[seq].get());
    REQUIRE(buf.held() == 6);
    REQUIRE(buf.release(out) == 2);
    REQUIRE(out == std::vector<raw_event*>{owned[0].get(), owned[1].get()});
    REQUIRE(buf.next() == 2);
    buf.skip(); // 2 is kept elsewhere
    REQUIRE(buf.release(out) == 1);
    REQUIRE(buf.next() == 4);
    REQUIRE(buf.held() == 3);
    std::vector<raw_event*> rest;
    buf.drain(rest);
    REQUIRE(rest == std::vector<raw_event*>{owned[5].get(), owned[7].get(),
                                            owned[9].get()});
    REQUIRE(buf.held() == 0);
    REQUIRE(buf.next() == 4);
    REQUIRE(buf.peak() == 6);
  }

  SECTION("per_key, reading the key through the pointer") {
    kd::reorder_buffer<raw_event*> buf{kl::order_mode::per_key};
    for (auto& ev : owned)
      buf.expect(ev->seq, ev->k);
    std::vector<raw_event*> out;
    // Key 1 holds 1, 4, 7: 4 and 7 wait for 1; key 0's 3 waits for 0.
    for (uint64_t seq : {4, 7, 3, 2})
      buf.arrive(seq, owned[seq].get(), out);
    REQUIRE(out == std::vector<raw_event*>{owned[2].get()});
    REQUIRE(buf.held() == 3);
    buf.arrive(1, owned[1].get(), out);
    REQUIRE(out == std::vector<raw_event*>{owned[2].get(), owned[1].get(),
                                           owned[4].get(), owned[7].get()});
    REQUIRE(buf.held() == 1);
    std::vector<raw_event*> rest;
    buf.drain(rest);
    REQUIRE(rest == std::vector<raw_event*>{owned[3].get()});
    REQUIRE(buf.held() == 0);
  }
}

TEST_CASE("a per_key reorder buffer reads keys with the KeyOf it is given",
          "[reorder]") {
  using pair = std::pair<uint64_t, kl::key>;
  kd::reorder_buffer<pair, second_key> buf{kl::order_mode::per_key};
  buf.expect(0, kl::key{"a"});
  buf.expect(1, kl::key{"b"});
  buf.expect(2, kl::key{"a"});
  std::vector<pair> out;
  buf.arrive(2, pair{2, kl::key{"a"}}, out);
  buf.arrive(1, pair{1, kl::key{"b"}}, out);
  REQUIRE(out.size() == 1);
  REQUIRE(out[0].first == 1);
  REQUIRE(buf.held() == 1);
  buf.arrive(0, pair{0, kl::key{"a"}}, out);
  REQUIRE(out.size() == 3);
  REQUIRE(out[1].first == 0);
  REQUIRE(out[2].first == 2);
  REQUIRE(buf.held() == 0);
  REQUIRE(buf.peak() == 1);
}
