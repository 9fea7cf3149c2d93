// SPDX-License-Identifier: Apache-2.0
// The time stamps every event carries: from the CPU's counter between
// anchors, they must stay with the steady clock, on every thread.

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include <catch2/catch.hpp>

#include "keylane/detail/stamp_clock.hpp"

namespace {

using keylane::detail::clock;
using keylane::detail::stamp_clock;

// Stamps taken between two steady-clock reads over `span`, each checked to
// lie between them give or take `slack`; returns how many strayed.
int strays(std::chrono::milliseconds span, std::chrono::microseconds slack,
           int& samples) {
  int bad = 0;
  auto until = clock::now() + span;
  for (;;) {
    auto before = clock::now();
    auto s = stamp_clock::now();
    auto after = clock::now();
    ++samples;
    if (s < before - slack || s > after + slack)
      ++bad;
    if (after >= until)
      return bad;
  }
}

} // namespace

TEST_CASE("submit time stamps stay within microseconds of the steady clock, "
          "across anchors and on every thread",
          "[clock]") {
  // Long enough for several calibrations and windows (2 ms each).
  constexpr auto span = std::chrono::milliseconds(30);
  constexpr auto slack = std::chrono::microseconds(20);
  int samples = 0;
  CHECK(strays(span, slack, samples) == 0);
  CHECK(samples > 1000);
  std::atomic<int> bad{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < 3; ++i)
    threads.emplace_back([&] {
      int n = 0;
      bad += strays(span, slack, n);
    });
  for (auto& t : threads)
    t.join();
  CHECK(bad.load() == 0);
}

TEST_CASE("a thread that slept past its window stamps the steady clock's time "
          "again",
          "[clock]") {
  int samples = 0;
  REQUIRE(strays(std::chrono::milliseconds(5), std::chrono::microseconds(20),
                 samples)
          == 0);
  // Past the window: the stamp must not extrapolate from the old anchor
  // with a stale rate; it reads the clock anew.
  std::this_thread::sleep_for(std::chrono::milliseconds(10));
  auto before = clock::now();
  auto s = stamp_clock::now();
  auto after = clock::now();
  CHECK(s >= before);
  CHECK(s <= after);
}
