// SPDX-License-Identifier: Apache-2.0
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

TEST_CASE("an offset that waits for its keyed state finishes only once its "
          "output and its state are both done, in either order",
          "[kafka][offsets][state]") {
  offset_tracker t;
  for (int64_t o : {0, 1, 2})
    t.take(o);
  CHECK(t.await_state(0));
  CHECK(t.await_state(1));
  // 0: output, then state.
  CHECK_FALSE(t.finish(0));
  CHECK(t.awaiting_state() == 1);
  CHECK(t.committable() == 0);
  CHECK(t.state_durable(0));
  CHECK(t.awaiting_state() == 0);
  CHECK(t.committable() == 1);
  // 1: state, then output.
  CHECK_FALSE(t.state_durable(1));
  CHECK(t.committable() == 1);
  CHECK(t.finish(1));
  CHECK(t.committable() == 2);
  // 2 does not wait (a parked event): its output alone decides.
  CHECK_FALSE(t.state_durable(2));
  CHECK(t.finish(2));
  CHECK(t.committable() == 3);
  CHECK(t.unfinished() == 0);
  // Finished or never taken: nothing to wait for.
  CHECK_FALSE(t.await_state(1));
  CHECK_FALSE(t.await_state(7));
  CHECK_FALSE(t.state_durable(7));
}

TEST_CASE("a refused record that waited for its state leaves no count behind",
          "[kafka][offsets][state]") {
  offset_tracker t;
  t.take(0);
  CHECK(t.await_state(0));
  t.untake();
  CHECK(t.unfinished() == 0);
  CHECK(t.awaiting_state() == 0);
  CHECK(t.committable() == -1);
}

TEST_CASE("with outputs and durable states arriving in random order the "
          "committable offset never passes a record missing either",
          "[kafka][offsets][state][property]") {
  auto seed = std::random_device{}();
  INFO("seed " << seed);
  std::mt19937 rng{seed};
  constexpr int64_t n = 400;
  offset_tracker t;
  // Every fifth record parked: it waits for its output only.
  std::vector<bool> stateful(n), output(n, false), durable(n, false);
  // Notices: (offset, 0 = output, 1 = state).
  std::vector<std::pair<int64_t, int>> notices;
  for (int64_t i = 0; i < n; ++i) {
    t.take(i);
    stateful[i] = i % 5 != 0;
    if (stateful[i]) {
      REQUIRE(t.await_state(i));
      notices.emplace_back(i, 1);
    }
    notices.emplace_back(i, 0);
  }
  std::shuffle(notices.begin(), notices.end(), rng);
  auto finished = [&](int64_t i) {
    return output[i] && (!stateful[i] || durable[i]);
  };
  for (auto [o, kind] : notices) {
    bool was = finished(o);
    bool now;
    if (kind == 0) {
      output[o] = true;
      now = t.finish(o);
    } else {
      durable[o] = true;
      now = t.state_durable(o);
    }
    REQUIRE(now == (!was && finished(o)));
    int64_t lowest = 0;
    while (lowest < n && finished(lowest))
      ++lowest;
    REQUIRE(t.committable() == lowest);
    size_t waiting = 0;
    for (int64_t i = 0; i < n; ++i)
      waiting += stateful[i] && output[i] && !durable[i];
    REQUIRE(t.awaiting_state() == waiting);
  }
  CHECK(t.committable() == n);
  CHECK(t.unfinished() == 0);
}
