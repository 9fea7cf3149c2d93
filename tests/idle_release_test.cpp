// SPDX-License-Identifier: Apache-2.0
// An idle runtime gives memory back (shards shrink their tables, the
// allocator is asked to return pages) and then runs as before.
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include <tsl/robin_map.h>

#include <keylane/detail/memory_release.hpp>

#include "log_capture.hpp"
#include "runtime_support.hpp"

using namespace runtime_support;

TEST_CASE("an empty open-addressing table past the bound is replaced by an "
          "empty one, a smaller or non-empty one is kept",
          "[memory]") {
  tsl::robin_map<int, int> t;
  for (int i = 0; i < 5000; ++i)
    t.emplace(i, i);
  auto grown = t.bucket_count();
  REQUIRE(grown > 1024);
  kl::detail::shrink_if_empty(t);
  CHECK(t.bucket_count() == grown); // not empty: kept
  t.clear();
  kl::detail::shrink_if_empty(t, grown); // empty but within the bound
  CHECK(t.bucket_count() == grown);
  kl::detail::shrink_if_empty(t);
  CHECK(t.bucket_count() < 1024);
  t.emplace(1, 1); // usable afterwards
  CHECK(t.at(1) == 1);
}

TEST_CASE("a runtime that went idle gives memory back, and afterwards runs "
          "every key's events in order as before",
          "[memory][lane]") {
  std::mutex mtx;
  std::map<int, std::vector<int>> seen; // key -> payloads in output order
  log_capture::lines log; // outlives the runtime, whose shards write to it
  auto cfg = two_threads();
  cfg.lane_linger_ms = 0;
  cfg.log = kl::log_level::debug;
  cfg.order = kl::order_mode::per_key;
  auto rt = start<int_rt>(cfg, scripted_registry(), [&](int_rt::event_type& e) {
    std::lock_guard<std::mutex> guard{mtx};
    REQUIRE(e.status == kl::outcome::ok);
    seen[static_cast<int>(e.key().integer())].push_back(e.result.value_or(-10) / 10);
  });
  rt->set_log_writer(log.writer());
  constexpr int keys = 3000; // grows every table past its shrink bound
  int next = 0;
  for (int round = 1; round <= 2; ++round) {
    for (int i = 0; i < keys * 2; ++i)
      REQUIRE(rt->submit(kl::key{uint64_t(i % keys)}, next++));
    REQUIRE(rt->drain(30s));
    REQUIRE(eventually([&] { return rt->stats().active_lanes == 0; }));
    INFO(log.all());
    // Each idle period ends in a release by each shard that hosted lanes.
    // (Keys waiting for a slot wait in ingress, whose queue and backlog
    // tables give their memory back as they empty; the supervisor holds
    // events only of parked keys.)
    REQUIRE(eventually([&] {
      return log.count("idle: shard ") >= size_t(round);
    }));
  }
  std::lock_guard<std::mutex> guard{mtx};
  REQUIRE(seen.size() == size_t(keys));
  for (auto& [k, vs] : seen) {
    REQUIRE(vs.size() == 4);
    for (size_t j = 0; j < vs.size(); ++j)
      CHECK(vs[j] == k + int(j) * keys); // each key in submission order
  }
}
