// SPDX-License-Identifier: Apache-2.0
// A lane's queue: first in, first out across its compaction, and its
// storage handed from a retired lane to the next with the capacity kept
// and nothing of the old contents.
#include <catch2/catch.hpp>

#include <cstdint>

#include <keylane/detail/event_fifo.hpp>

namespace kl = keylane;
using kl::detail::event_base;
using kl::detail::event_fifo;
using kl::detail::event_ptr;

namespace {

event_ptr make(uint64_t seq) {
  event_ptr ev{new event_base(kl::key{seq})};
  ev->seq = seq;
  return ev;
}

} // namespace

TEST_CASE("a lane's queue gives its events back in order, also across "
          "its compaction", "[unit][lane]") {
  event_fifo q;
  uint64_t next_in = 0, next_out = 0;
  // Pops run ahead of pushes far enough for the front to be compacted away
  // (64 or more taken while more remain).
  for (int round = 0; round < 50; ++round) {
    for (int i = 0; i < 7; ++i)
      q.push_back(make(next_in++));
    for (int i = 0; i < 5; ++i)
      REQUIRE(q.pop_front()->seq == next_out++);
    REQUIRE(q.size() == next_in - next_out);
  }
  while (!q.empty())
    REQUIRE(q.pop_front()->seq == next_out++);
  CHECK(next_out == next_in);
}

TEST_CASE("a lane's queue storage moves to another queue emptied, with its "
          "capacity", "[unit][lane]") {
  event_fifo a;
  for (uint64_t i = 0; i < 20; ++i)
    a.push_back(make(i));
  (void)a.pop_front();
  auto storage = a.take_storage();
  CHECK(a.empty());
  CHECK(storage.empty());
  CHECK(storage.capacity() >= 20);
  auto cap = storage.capacity();
  // `a` works on without it.
  a.push_back(make(100));
  CHECK(a.pop_front()->seq == 100);

  event_fifo b;
  b.adopt_storage(std::move(storage));
  CHECK(b.empty());
  for (uint64_t i = 0; i < cap; ++i)
    b.push_back(make(200 + i));
  CHECK(b.size() == cap);
  for (uint64_t i = 0; i < cap; ++i)
    REQUIRE(b.pop_front()->seq == 200 + i);
  CHECK(b.empty());
}
