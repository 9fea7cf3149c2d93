// SPDX-License-Identifier: Apache-2.0
// The sink's window ring against a deque doing the same: the same slots in
// the same places across growth and wrap-around, new slots empty, and a
// re-sequencing of pointers through reorder_buffer that releases each in
// turn.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdint>
#include <deque>
#include <numeric>
#include <random>
#include <vector>

#include <keylane/detail/reorder_buffer.hpp>
#include <keylane/detail/slot_ring.hpp>

namespace kl = keylane;
namespace kd = keylane::detail;

TEST_CASE("the window ring holds what a deque holds, across growth and "
          "wrap-around", "[unit][sink]") {
  auto seed = std::random_device{}();
  INFO("seed " << seed);
  std::mt19937_64 rng{seed};
  kd::slot_ring<uint64_t> ring; // 0: an empty slot
  std::deque<uint64_t> model;
  uint64_t next_value = 1;
  for (int step = 0; step < 200000; ++step) {
    auto op = rng() % 10;
    if (op < 4) {
      // Fill a slot at most ~300 past the front (growing the window).
      auto i = rng() % 300;
      if (i >= model.size()) {
        model.resize(i + 1);
        ring.resize(i + 1);
      }
      REQUIRE(ring[i] == model[i]);
      if (model[i] == 0) {
        model[i] = next_value;
        ring[i] = next_value;
        ++next_value;
      }
    } else if (!model.empty()) {
      // Take the front and drop it.
      REQUIRE(ring.front() == model.front());
      model.front() = 0;
      ring.front() = 0;
      model.pop_front();
      ring.pop_front();
    }
    REQUIRE(ring.size() == model.size());
    if (step % 997 == 0)
      for (size_t i = 0; i < model.size(); ++i)
        REQUIRE(ring[i] == model[i]);
  }
}

TEST_CASE("pointers re-sequenced through the ring come out in order, each "
          "once", "[unit][sink]") {
  auto seed = std::random_device{}();
  INFO("seed " << seed);
  std::mt19937_64 rng{seed};
  constexpr size_t n = 50000;
  std::vector<uint64_t> values(n);
  std::iota(values.begin(), values.end(), 0);
  // Arrival order: shuffled within windows of 5,000 (as shards' batches
  // interleave).
  std::vector<size_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  for (size_t at = 0; at < n; at += 5000)
    std::shuffle(order.begin() + at, order.begin() + std::min(n, at + 5000),
                 rng);
  kd::reorder_buffer<uint64_t*> buf{kl::order_mode::global};
  std::vector<uint64_t*> out;
  for (auto seq : order) {
    buf.put(seq, &values[seq]);
    if (rng() % 4 == 0)
      buf.release(out);
  }
  buf.release(out);
  REQUIRE(out.size() == n);
  for (size_t i = 0; i < n; ++i)
    REQUIRE(*out[i] == i);
  CHECK(buf.held() == 0);
  CHECK(buf.next() == n);
}
