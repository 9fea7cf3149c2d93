// SPDX-License-Identifier: Apache-2.0
#include <chrono>
#include <cstdint>
#include <set>

#include <catch2/catch.hpp>

#include "../player_ids.hpp"

namespace {

using clock_type = std::chrono::system_clock;
using std::chrono::milliseconds;

// 2026-12-04, about when this was written.
const clock_type::time_point t0{std::chrono::seconds(1796342400)};

// The ids of one run whose clock stands still at `at` (a harsher case
// than any real run, whose clock moves on between joins).
std::set<uint64_t> run_at(clock_type::time_point at, int joins) {
  game::player_ids ids{[at] { return at; }};
  std::set<uint64_t> out;
  for (int i = 0; i < joins; ++i)
    out.insert(ids.next());
  return out;
}

bool disjoint(const std::set<uint64_t>& a, const std::set<uint64_t>& b) {
  for (auto id : a)
    if (b.count(id) != 0)
      return false;
  return true;
}

} // namespace

TEST_CASE("a run started 1e8 ms (27.8 hours) after another repeats none of "
          "its ids",
          "[game_rooms][ids]") {
  auto first = run_at(t0, 1000);
  auto second = run_at(t0 + milliseconds(100000000), 1000);
  CHECK(disjoint(first, second));
}

TEST_CASE("a run started a millisecond after one that had 5,000 joins "
          "repeats none of its ids",
          "[game_rooms][ids]") {
  auto first = run_at(t0, 5000);
  auto second = run_at(t0 + milliseconds(1), 5000);
  CHECK(disjoint(first, second));
}

TEST_CASE("ids keep growing when the clock steps back within a run",
          "[game_rooms][ids]") {
  auto now = t0;
  game::player_ids ids{[&now] { return now; }};
  auto a = ids.next();
  now -= std::chrono::hours(1);
  auto b = ids.next();
  CHECK(b > a);
  CHECK(a != 0);
}

TEST_CASE("ids fit in 64 bits until the year 2200", "[game_rooms][ids]") {
  // 2200-01-01 is 7,258,118,400 s after the epoch (libstdc++'s
  // system_clock, in nanoseconds, itself ends in 2262).
  auto late = clock_type::time_point{std::chrono::seconds(7258118400LL)};
  auto far = run_at(late, 2);
  auto now = run_at(t0, 2);
  CHECK(*far.begin() > *now.rbegin());
}
