// SPDX-License-Identifier: Apache-2.0
// A lane gives its key's backlog counts back in groups when the key's
// limit is large: the count may stay up to a group above the events
// really unfinished, never below, and a producer at the limit goes on.
#include <thread>

#include "hold_support.hpp"
#include "runtime_support.hpp"

using namespace runtime_support;

namespace {

constexpr size_t limit = 4096; // the smallest limit given back in groups
constexpr size_t group = 64;

kl::settings counted(size_t linger_ms) {
  auto s = two_threads();
  s.key_backlog = limit;
  s.window = kl::unbounded;
  s.lane_linger_ms = linger_ms;
  s.overflow = kl::overflow_policy::reject;
  return s;
}

// Submits events of `k` (held by the handler) until the key is full.
size_t fill(int_rt& rt, const kl::key& k) {
  size_t n = 0;
  for (;;) {
    auto r = rt.submit(k, static_cast<int>(n));
    if (!r) {
      CHECK(r.code() == kl::errc::key_backlog_full);
      return n;
    }
    ++n;
  }
}

void pull_n(int_rt& rt, size_t n) {
  std::unique_ptr<int_rt::event_type> ev;
  for (size_t i = 0; i < n; ++i)
    REQUIRE(rt.pull(ev, 10s));
}

} // namespace

TEST_CASE("a live lane keeps at most a group of its key's ended events uncounted",
          "[backlog][admission]") {
  hold_support::holder h;
  auto rt = start<int_rt>(counted(60000), hold_support::factory(&h));
  at_exit cleanup{[&] { rt->stop(); h.release_all(); }};
  const kl::key k{7};
  // 4,000 events end; the lane stays (a minute's linger).
  for (int i = 0; i < 4000; ++i)
    REQUIRE(rt->submit(k, i));
  pull_n(*rt, 4000);
  // Now nothing ends: the key takes what its count leaves room for.
  h.holding({-1});
  auto taken = fill(*rt, k);
  CHECK(taken <= limit);
  CHECK(taken >= limit - (group - 1));
  REQUIRE(h.wait_held(1));
  h.release_all();
  pull_n(*rt, taken);
  CHECK(rt->stats().active_lanes == 1);
}

TEST_CASE("a retiring lane gives back every count its key still had",
          "[backlog][admission]") {
  hold_support::holder h;
  auto rt = start<int_rt>(counted(0), hold_support::factory(&h));
  at_exit cleanup{[&] { rt->stop(); h.release_all(); }};
  const kl::key k{7};
  for (int i = 0; i < 4000; ++i)
    REQUIRE(rt->submit(k, i));
  pull_n(*rt, 4000);
  REQUIRE(eventually([&] { return rt->stats().active_lanes == 0; }));
  h.holding({-1});
  CHECK(fill(*rt, k) == limit);
  REQUIRE(h.wait_held(1));
  h.release_all();
  pull_n(*rt, limit);
}

TEST_CASE("a producer blocked at its key's limit goes on while the lane lives",
          "[backlog][admission][block]") {
  hold_support::holder h;
  auto s = counted(60000);
  s.overflow = kl::overflow_policy::block;
  auto rt = start<int_rt>(s, hold_support::factory(&h));
  at_exit cleanup{[&] { rt->stop(); h.release_all(); }};
  const kl::key k{7};
  constexpr int total = 5 * static_cast<int>(limit);
  // Past the limit five times over: each wait ends when the lane gives a
  // group back, long before its linger would retire it. (Stopping the
  // runtime ends a wait that never ends otherwise.)
  std::thread producer{[&] {
    for (int i = 0; i < total; ++i)
      if (!rt->submit(k, i))
        return;
  }};
  std::vector<int> seen;
  std::unique_ptr<int_rt::event_type> ev;
  while (seen.size() < static_cast<size_t>(total) && rt->pull(ev, 10s))
    seen.push_back(*ev->result);
  if (seen.size() < static_cast<size_t>(total))
    rt->stop();
  producer.join();
  REQUIRE(seen.size() == static_cast<size_t>(total));
  for (int i = 0; i < total; ++i)
    REQUIRE(seen[static_cast<size_t>(i)] == i);
  CHECK(rt->stats().lanes_spawned == 1);
}
