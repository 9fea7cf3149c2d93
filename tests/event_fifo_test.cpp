// SPDX-License-Identifier: Apache-2.0
// A lane's queue, linked through its events: first in, first out however
// pushes and pops interleave, and it owns what it holds (a queue dropped
// with events in it deletes them, once each).
#include <catch2/catch.hpp>

#include <cstdint>
#include <random>

#include <keylane/detail/event_fifo.hpp>

namespace kl = keylane;
using kl::detail::event_base;
using kl::detail::event_fifo;
using kl::detail::event_ptr;

namespace {

struct counted_event : event_base {
  counted_event(uint64_t seq, int& alive) : event_base(kl::key{seq}), alive(alive) {
    this->seq = seq;
    ++alive;
  }
  ~counted_event() override { --alive; }
  int& alive;
};

} // namespace

TEST_CASE("a lane's queue gives its events back in order however pushes "
          "and pops interleave", "[unit][lane]") {
  auto seed = std::random_device{}();
  INFO("seed " << seed);
  std::mt19937_64 rng{seed};
  int alive = 0;
  {
    event_fifo q;
    uint64_t next_in = 0, next_out = 0;
    for (int step = 0; step < 5000; ++step) {
      if (rng() % 3 != 0 || q.empty()) {
        q.push_back(event_ptr{new counted_event(next_in++, alive)});
      } else {
        auto ev = q.pop_front();
        REQUIRE(ev->seq == next_out++);
        REQUIRE(ev->next == nullptr); // unlinked: free to join another list
      }
      REQUIRE(q.empty() == (next_in == next_out));
    }
    while (!q.empty())
      REQUIRE(q.pop_front()->seq == next_out++);
    CHECK(next_out == next_in);
    // Empty again, it links afresh.
    q.push_back(event_ptr{new counted_event(7, alive)});
    CHECK(q.pop_front()->seq == 7);
  }
  CHECK(alive == 0);
}

TEST_CASE("a lane's queue deletes what it holds when dropped or cleared, "
          "and finds without taking", "[unit][lane]") {
  int alive = 0;
  {
    event_fifo q;
    for (uint64_t i = 0; i < 10; ++i)
      q.push_back(event_ptr{new counted_event(i, alive)});
    CHECK(alive == 10);
    uint64_t visited = 0;
    CHECK(q.find_if([&](const event_base& ev) {
      ++visited;
      return ev.seq == 4;
    }));
    CHECK(visited == 5);
    CHECK_FALSE(q.find_if([](const event_base& ev) { return ev.seq == 99; }));
    CHECK(alive == 10);
    (void) q.pop_front();
    CHECK(alive == 9);
    q.clear();
    CHECK(q.empty());
    CHECK(alive == 0);
    for (uint64_t i = 0; i < 3; ++i)
      q.push_back(event_ptr{new counted_event(i, alive)});
  }
  CHECK(alive == 0);
}
