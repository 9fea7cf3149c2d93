#include <catch2/catch.hpp>

#include <algorithm>
#include <random>
#include <vector>

#include "keylane/kafka/offset_tracker.hpp"

using keylane::kafka::offset_tracker;

TEST_CASE("the committable offset stops at the lowest unfinished record",
          "[kafka][offsets]") {
  offset_tracker t;
  CHECK(t.committable() == -1);
  for (int64_t o : {10, 11, 12, 15})
    t.take(o);
  CHECK(t.committable() == 10);
  CHECK(t.finish(11));
  CHECK(t.finish(15));
  CHECK(t.committable() == 10);
  CHECK(t.finish(10));
  CHECK(t.committable() == 12);
  CHECK_FALSE(t.finish(11)); // already finished
  CHECK_FALSE(t.finish(13)); // never taken (a gap)
  CHECK(t.finish(12));
  CHECK(t.committable() == 16);
  CHECK(t.outstanding() == 0);
}

TEST_CASE("a refused record is untaken and leaves the committable offset "
          "as it was",
          "[kafka][offsets]") {
  offset_tracker t;
  t.take(0);
  CHECK(t.finish(0));
  t.take(1);
  t.untake();
  CHECK(t.committable() == 1);
  CHECK(t.unfinished() == 0);
  t.take(1);
  CHECK(t.committable() == 1);
  CHECK(t.unfinished() == 1);
}

TEST_CASE("finishing records in random order never lets the committable "
          "offset pass an unfinished one",
          "[kafka][offsets][property]") {
  auto seed = std::random_device{}();
  INFO("seed " << seed);
  std::mt19937 rng{seed};
  offset_tracker t;
  std::vector<int64_t> order(500);
  for (int64_t i = 0; i < 500; ++i) {
    order[i] = i;
    t.take(i);
  }
  std::shuffle(order.begin(), order.end(), rng);
  std::vector<bool> done(500, false);
  for (auto o : order) {
    REQUIRE(t.finish(o));
    done[o] = true;
    auto c = t.committable();
    auto lowest = std::find(done.begin(), done.end(), false) - done.begin();
    REQUIRE(c == lowest);
  }
  CHECK(t.committable() == 500);
}
