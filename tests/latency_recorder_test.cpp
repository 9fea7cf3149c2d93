// SPDX-License-Identifier: Apache-2.0
// The latency histogram's buckets: an event that took d lands in the first
// bucket whose bound its whole microseconds do not exceed, at every bound
// and between them, and the count and sum follow.
#include <catch2/catch.hpp>

#include <chrono>
#include <cstdint>
#include <random>

#include <keylane/detail/latency_recorder.hpp>

namespace kl = keylane;
using kl::latency_histogram;
using kl::detail::latency_recorder;

namespace {

// The definition, by scanning the bounds.
size_t reference_bucket(uint64_t ns) {
  auto us = ns / 1000;
  size_t i = 0;
  while (i < latency_histogram::bounds_us.size()
         && us > latency_histogram::bounds_us[i])
    ++i;
  return i;
}

} // namespace

TEST_CASE("a latency lands in the bucket its microseconds belong to, at "
          "and around every bound", "[unit][metrics]") {
  for (auto b : latency_histogram::bounds_us) {
    for (uint64_t ns : {b * 1000 - 1, b * 1000, b * 1000 + 999, b * 1000 + 1000,
                        b * 1000 + 1001}) {
      INFO("ns " << ns);
      REQUIRE(latency_recorder::bucket_of(ns) == reference_bucket(ns));
    }
  }
  CHECK(latency_recorder::bucket_of(0) == 0);
  CHECK(latency_recorder::bucket_of(INT64_MAX)
        == latency_histogram::bounds_us.size());
  auto seed = std::random_device{}();
  INFO("seed " << seed);
  std::mt19937_64 rng{seed};
  for (int i = 0; i < 100000; ++i) {
    // Spread over every decade the bounds cover, and past them.
    auto ns = rng() >> (rng() % 64);
    ns &= INT64_MAX;
    REQUIRE(latency_recorder::bucket_of(ns) == reference_bucket(ns));
  }
}

TEST_CASE("recording latencies fills their buckets, the count and the sum",
          "[unit][metrics]") {
  latency_recorder r;
  using std::chrono::nanoseconds;
  r.record(nanoseconds{5'000});      // 5 us: first bucket (<= 10)
  r.record(nanoseconds{10'999});     // 10 us: still the first
  r.record(nanoseconds{11'000});     // 11 us: second (<= 25)
  r.record(nanoseconds{-7});         // clock went back: counted as 0
  r.record(nanoseconds{20'000'000'000}); // 20 s: past the last bound
  auto h = r.snapshot();
  CHECK(h.counts[0] == 3);
  CHECK(h.counts[1] == 1);
  CHECK(h.counts[latency_histogram::bounds_us.size()] == 1);
  CHECK(h.count == 5);
  CHECK(h.sum == nanoseconds{5'000 + 10'999 + 11'000 + 20'000'000'000});
}
