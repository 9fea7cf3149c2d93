// SPDX-License-Identifier: Apache-2.0
// A submit blocked on a full window: credit wakes it only once half the
// window is free (a producer faster than the shards would otherwise sleep
// and wake per batch), yet it takes the room a single delivery makes when
// no more credit is coming, the rest of the window held by events that do
// not end until after it returns.
#include <future>
#include <thread>

#include "hold_support.hpp"
#include "runtime_support.hpp"

using namespace runtime_support;

TEST_CASE("a submit blocked on a full window takes the room one delivery "
          "makes, though the events holding the rest never end meanwhile",
          "[window][admission][block]") {
  hold_support::holder h;
  auto s = two_threads();
  s.window = 4;
  s.order = kl::order_mode::per_key; // a delivery waits for no other key
  s.overflow = kl::overflow_policy::block;
  auto rt = start<int_rt>(s, hold_support::factory(&h));
  at_exit cleanup{[&] { rt->stop(); h.release_all(); }};
  h.holding({0, 1, 2, 3});
  for (int i = 0; i < 4; ++i)
    REQUIRE(rt->submit(kl::key{static_cast<uint64_t>(i)}, i));
  REQUIRE(h.wait_held(4));

  std::promise<bool> taken;
  auto submitted = taken.get_future();
  std::thread producer{[&] {
    taken.set_value(static_cast<bool>(rt->submit(kl::key{uint64_t{9}}, 9)));
  }};
  CHECK(submitted.wait_for(50ms) == std::future_status::timeout); // full

  // One event ends and is delivered: one place is free, three stay held,
  // and no other credit comes until the blocked submit has returned.
  h.release(3);
  std::unique_ptr<int_rt::event_type> ev;
  REQUIRE(rt->pull(ev, 10s));
  CHECK(*ev->result == 3);
  auto ready = submitted.wait_for(10s) == std::future_status::ready;
  if (!ready)
    rt->stop(); // ends the wait, so the thread can be joined
  producer.join();
  REQUIRE(ready);
  CHECK(submitted.get());

  h.release_all();
  std::set<int> rest;
  for (int i = 0; i < 4; ++i) {
    REQUIRE(rt->pull(ev, 10s));
    rest.insert(*ev->result);
  }
  CHECK(rest == std::set<int>{0, 1, 2, 9});
}
