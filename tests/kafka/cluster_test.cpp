// SPDX-License-Identifier: Apache-2.0
// The Kafka source against librdkafka's mock cluster, with members in
// separate processes (tests/kafka/member.cpp): group sharing, a crash and a
// restart, members joining and leaving, and injected broker faults. Every
// test checks the same guarantees on the members' logs (member_logs.hpp).

#include <catch2/catch.hpp>

#include <chrono>
#include <csignal>
#include <cstdio>
#include <string>

#include "cluster_fixture.hpp"

using namespace std::chrono_literals;
using kafka_test::cluster_fixture;
using kafka_test::wait_until;

namespace {

void require_guarantees(const cluster_fixture& f) {
  auto logs = f.logs();
  auto problems = logs.problems(f.produced());
  for (size_t i = 0; i < problems.size() && i < 20; ++i)
    UNSCOPED_INFO(problems[i]);
  INFO("records " << f.produced().size() << ", finished lines "
                  << logs.finished.size() << ", redelivered "
                  << logs.redelivered() << ", commits "
                  << logs.commits.size());
  CHECK(problems.empty());
  // What the run went through, for the CTest log.
  std::printf("records %zu, finished %zu, redelivered %zu, commits %zu, "
              "refused submits %llu, revoke timeouts %llu\n",
              f.produced().size(), logs.finished.size(), logs.redelivered(),
              logs.commits.size(),
              static_cast<unsigned long long>(logs.refused),
              static_cast<unsigned long long>(logs.revoke_timeouts));
}

} // namespace

TEST_CASE("two consumer processes in one group finish every record in key "
          "order and commit all of it",
          "[kafka][group]") {
  cluster_fixture f{"range,roundrobin"}; // eager
  REQUIRE(f.ready());
  REQUIRE(f.produce(24, 10));
  auto& a = f.start_member();
  auto& b = f.start_member();
  REQUIRE(a.started());
  REQUIRE(b.started());
  REQUIRE(f.produce(24, 10));
  REQUIRE(wait_until([&] { return f.all_committed(); }, 60s));
  a.signal(SIGTERM);
  b.signal(SIGTERM);
  CHECK(a.wait(30s) == 0);
  CHECK(b.wait(30s) == 0);
  require_guarantees(f);
  auto logs = f.logs();
  CHECK(logs.stopped.size() == 2);
  // Both took part: a group of two split six partitions.
  CHECK(cluster_fixture::finished_at_least(a, 1));
  CHECK(cluster_fixture::finished_at_least(b, 1));
}

TEST_CASE("a consumer killed with SIGKILL loses nothing and only its "
          "uncommitted records run again",
          "[kafka][crash]") {
  cluster_fixture f{"cooperative-sticky"};
  REQUIRE(f.ready());
  auto& a = f.start_member(20);
  auto& b = f.start_member(20);
  REQUIRE(f.produce(24, 20));
  // Kill a while it has events in flight and commits behind it.
  REQUIRE(wait_until([&] { return cluster_fixture::finished_at_least(a, 60); },
                     60s));
  a.signal(SIGKILL);
  CHECK(a.wait(10s) == 128 + SIGKILL);
  // b takes a's partitions over after the session times out.
  REQUIRE(wait_until([&] { return f.all_committed(); }, 60s));
  // A restarted member joins and shares the next records.
  auto& c = f.start_member(5);
  REQUIRE(f.produce(24, 5));
  REQUIRE(wait_until([&] { return f.all_committed(); }, 60s));
  b.signal(SIGTERM);
  c.signal(SIGTERM);
  CHECK(b.wait(30s) == 0);
  CHECK(c.wait(30s) == 0);
  require_guarantees(f);
}

TEST_CASE("members joining and leaving rebalance without losing or "
          "reordering a key's records",
          "[kafka][rebalance]") {
  cluster_fixture f{"cooperative-sticky"};
  REQUIRE(f.ready());
  auto& a = f.start_member(10);
  REQUIRE(f.produce(24, 10));
  REQUIRE(wait_until([&] { return cluster_fixture::working(a); }, 30s));
  auto& b = f.start_member(10); // joins: a gives up some partitions
  REQUIRE(f.produce(24, 10));
  REQUIRE(wait_until([&] { return cluster_fixture::working(b); }, 30s));
  a.signal(SIGTERM); // leaves: b takes everything
  CHECK(a.wait(30s) == 0);
  REQUIRE(f.produce(24, 10));
  REQUIRE(wait_until([&] { return f.all_committed(); }, 60s));
  b.signal(SIGTERM);
  CHECK(b.wait(30s) == 0);
  require_guarantees(f);
}

TEST_CASE("injected request errors, leader moves and a broker going down "
          "and up lose nothing",
          "[kafka][faults]") {
  cluster_fixture f{"range,roundrobin"};
  REQUIRE(f.ready());
  auto& a = f.start_member(2);
  REQUIRE(f.produce(24, 5));
  REQUIRE(wait_until([&] { return cluster_fixture::working(a); }, 30s));
  auto& mc = f.cluster();
  // Failed commits (REQUEST_TIMED_OUT 7, NOT_COORDINATOR 16) and fetches
  // (NOT_LEADER_FOR_PARTITION 6) while records flow.
  mc.push_request_errors(8, {7, 16, 7});
  mc.push_request_errors(1, {6, 6});
  REQUIRE(f.produce(24, 5));
  for (int p = 0; p < 6; ++p)
    CHECK(!mc.set_leader(cluster_fixture::topic, p, 1 + (p + 1) % 3));
  REQUIRE(f.produce(24, 5));
  CHECK(!mc.set_broker_up(2, false));
  REQUIRE(wait_until([&] { return f.logs().values().size() >= 100; }, 60s));
  CHECK(!mc.set_broker_up(2, true));
  REQUIRE(f.produce(24, 5));
  REQUIRE(wait_until([&] { return f.all_committed(); }, 90s));
  a.signal(SIGTERM);
  CHECK(a.wait(30s) == 0);
  require_guarantees(f);
}
