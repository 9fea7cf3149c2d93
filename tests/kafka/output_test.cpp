// SPDX-License-Identifier: Apache-2.0
// The output topic (kafka.output_topic) against librdkafka's mock cluster,
// with the source in this process: results keyed as their input in each
// key's order, tombstones marked or skipped, and no offset committed before
// the broker acknowledged the record's output.

#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "keylane/kafka/config_loader.hpp"
#include "keylane/kafka/mock_cluster.hpp"
#include "keylane/kafka/producer.hpp"
#include "keylane/kafka/source.hpp"
#include "member_process.hpp"
#include "topic_reader.hpp"

using namespace std::chrono_literals;
namespace kk = keylane::kafka;
using kafka_test::wait_until;

namespace {

// Value "n": the key's n-th record. Fails n == 3 for good, skips n == 5
// and the value "skip"; answers the rest with "done:<n>".
struct verdict : keylane::handler<kk::record, std::string> {
  void on_event(kk::record& r, keylane::completion<std::string> done) override {
    if (r.value == "skip" || r.value == "5")
      return done.skip();
    if (r.value == "3")
      return done.fail_permanently("bad amount");
    done.ok("done:" + r.value);
  }
};

keylane::handler_factory verdict_factory() {
  return [](const keylane::handler_params&) {
    return std::make_unique<verdict>();
  };
}

// Fails value "3" for good until `healed`, answers the rest.
std::atomic<bool> healed{false};
struct healing : keylane::handler<kk::record, std::string> {
  void on_event(kk::record& r, keylane::completion<std::string> done) override {
    if (r.value == "3" && !healed)
      return done.fail_permanently("not yet");
    done.ok("done:" + r.value);
  }
};

std::string config_text(const std::string& bootstrap,
                        const std::string& tombstones,
                        const std::string& park = "none") {
  return "[runtime]\norder = \"none\"\n\n[park]\nstore = \"" + park
         + "\"\n\n"
         "[scheduler]\nthreads = 2\n\n[handler]\nname = \"verdict\"\n\n"
         "[kafka]\nbootstrap_servers = \"" + bootstrap + "\"\n"
         "group = \"output-test\"\ntopics = [\"in\"]\n"
         "commit_interval_ms = 50\noutput_topic = \"out\"\n"
         "output_tombstones = \"" + tombstones + "\"\n\n"
         "[kafka.properties]\n\"session.timeout.ms\" = 3000\n"
         "\"heartbeat.interval.ms\" = 300\n\"log_level\" = 2\n\n"
         "[kafka.output_properties]\n\"reconnect.backoff.max.ms\" = 1000\n"
         "\"log_level\" = 2\n";
}

/// Accepted commits, with how many outputs were acknowledged by then.
struct commit_log {
  struct entry {
    int32_t partition;
    int64_t offset;
    uint64_t delivered;
  };
  std::mutex mu;
  std::vector<entry> entries;
  std::atomic<kk::source*> src{nullptr};

  kk::source::commit_listener listener() {
    return [this](const std::string&, int32_t partition, int64_t offset) {
      auto* s = src.load();
      std::lock_guard<std::mutex> guard{mu};
      entries.push_back({partition, offset, s ? s->stats().delivered : 0});
    };
  }

  int64_t committed(int32_t partition) {
    std::lock_guard<std::mutex> guard{mu};
    int64_t at = -1;
    for (auto& e : entries)
      if (e.partition == partition && e.offset > at)
        at = e.offset;
    return at;
  }
};

} // namespace

TEST_CASE("results reach the output topic keyed as their input in each "
          "key's order, and skipped and failed events are marked records",
          "[kafka][output]") {
  auto mc = kk::mock_cluster::start(1);
  REQUIRE(mc);
  auto& cluster = **mc;
  REQUIRE(!cluster.create_topic("in", 3));
  REQUIRE(!cluster.create_topic("out", 2));
  auto prod = kk::producer::start(cluster.bootstrap_servers());
  REQUIRE(prod);
  constexpr int keys = 8, per_key = 10;
  for (int n = 0; n < per_key; ++n)
    for (int k = 0; k < keys; ++k)
      REQUIRE(!(*prod)->produce("in", "k" + std::to_string(k),
                                std::to_string(n)));
  REQUIRE(!(*prod)->flush(30s));

  auto cfg = kk::parse(config_text(cluster.bootstrap_servers(), "mark"),
                       "output.toml");
  REQUIRE(cfg);
  commit_log commits;
  std::atomic<int> outputs{0};
  auto src = kk::source::start(
    std::move(*cfg), verdict_factory(),
    [&outputs](kk::record_event&) { outputs++; }, commits.listener());
  REQUIRE(src);
  commits.src = src->get();
  REQUIRE(wait_until(
    [&] { return (*src)->stats().delivered >= keys * per_key; }, 60s));
  REQUIRE(wait_until(
    [&] {
      int64_t sum = 0;
      for (int p = 0; p < 3; ++p)
        sum += std::max<int64_t>(0, commits.committed(p));
      return sum == keys * per_key;
    },
    30s));
  (*src)->stop();
  auto st = (*src)->stats();
  CHECK(st.produced == keys * per_key);
  CHECK(st.output_failures == 0);

  auto out = kafka_test::read_topic(cluster.bootstrap_servers(), "out", 2,
                                    keys * per_key, 30s);
  REQUIRE(out.size() == keys * per_key);
  // Each input record answered once; each key in one partition, in order.
  std::set<std::string> sources;
  std::map<std::string, std::vector<const kafka_test::read_record*>> by_key;
  for (auto& r : out) {
    sources.insert(r.header("keylane.source"));
    by_key[r.key].push_back(&r);
  }
  CHECK(sources.size() == keys * per_key);
  REQUIRE(by_key.size() == keys);
  for (auto& [key, rs] : by_key) {
    INFO("key " << key);
    REQUIRE(rs.size() == per_key);
    for (int n = 0; n < per_key; ++n) {
      INFO("its record " << n);
      const auto& r = *rs[n];
      CHECK(r.partition == rs[0]->partition);
      if (n == 3) {
        CHECK(r.header("keylane.outcome") == "failed");
        CHECK(r.header("keylane.error").find("bad amount")
              != std::string::npos);
        CHECK(r.value.empty());
      } else if (n == 5) {
        CHECK(r.header("keylane.outcome") == "skipped");
        CHECK(r.value.empty());
      } else {
        CHECK(r.header("keylane.outcome") == "ok");
        CHECK(r.value == "done:" + std::to_string(n));
      }
    }
  }
}

TEST_CASE("with an output topic no offset is committed before the broker "
          "acknowledged that record's output",
          "[kafka][output][commit]") {
  auto mc = kk::mock_cluster::start(3);
  REQUIRE(mc);
  auto& cluster = **mc;
  REQUIRE(!cluster.create_topic("in", 2));
  REQUIRE(!cluster.create_topic("out", 1));
  // Input and group on broker 1; the output's only partition on broker 3,
  // which is down until the input has run and been committed.
  REQUIRE(!cluster.set_leader("in", 0, 1));
  REQUIRE(!cluster.set_leader("in", 1, 1));
  REQUIRE(!cluster.set_leader("out", 0, 3));
  REQUIRE(!cluster.set_coordinator("output-test", 1));
  auto prod = kk::producer::start(cluster.bootstrap_servers());
  REQUIRE(prod);
  REQUIRE(!cluster.set_broker_up(3, false));

  auto cfg = kk::parse(config_text(cluster.bootstrap_servers(), "skip"),
                       "output.toml");
  REQUIRE(cfg);
  commit_log commits;
  std::atomic<int> outputs{0};
  auto src = kk::source::start(
    std::move(*cfg), verdict_factory(),
    [&outputs](kk::record_event&) { outputs++; }, commits.listener());
  REQUIRE(src);
  commits.src = src->get();

  // Partition 1: ten results, their output stuck on broker 3.
  for (int n = 0; n < 10; ++n)
    REQUIRE(!(*prod)->produce("in", "a", "v", {}, 1));
  REQUIRE(!(*prod)->flush(30s));
  REQUIRE(wait_until([&] { return outputs.load() == 10; }, 60s));
  // Partition 0: ten skipped records (no output with "skip"): they finish
  // at once, so their commit proves a commit ran after partition 1's
  // events had all ended.
  for (int n = 0; n < 10; ++n)
    REQUIRE(!(*prod)->produce("in", "b", "skip", {}, 0));
  REQUIRE(!(*prod)->flush(30s));
  REQUIRE(wait_until([&] { return commits.committed(0) == 10; }, 60s));
  CHECK(commits.committed(1) <= 0);
  CHECK((*src)->stats().delivered == 0);
  CHECK((*src)->stats().finished == 10);

  REQUIRE(!cluster.set_broker_up(3, true));
  REQUIRE(wait_until([&] { return commits.committed(1) == 10; }, 60s));
  (*src)->stop();
  {
    std::lock_guard<std::mutex> guard{commits.mu};
    for (auto& e : commits.entries)
      if (e.partition == 1) {
        INFO("commit of partition 1 at " << e.offset << " with "
                                         << e.delivered << " delivered");
        CHECK(static_cast<uint64_t>(e.offset) <= e.delivered);
      }
  }
  auto st = (*src)->stats();
  CHECK(st.delivered == 10);
  CHECK(st.output_failures == 0);
  auto out = kafka_test::read_topic(cluster.bootstrap_servers(), "out", 1, 10,
                                    30s);
  CHECK(out.size() == 10);
  for (auto& r : out)
    CHECK(r.header("keylane.outcome") == "ok");
}

TEST_CASE("a record parked in memory gets a marked output record but its "
          "offset waits for the replay's delivered output",
          "[kafka][output][park]") {
  auto mc = kk::mock_cluster::start(1);
  REQUIRE(mc);
  auto& cluster = **mc;
  REQUIRE(!cluster.create_topic("in", 2));
  REQUIRE(!cluster.create_topic("out", 1));
  auto prod = kk::producer::start(cluster.bootstrap_servers());
  REQUIRE(prod);
  for (int n = 0; n < 6; ++n)
    REQUIRE(!(*prod)->produce("in", "a", std::to_string(n), {}, 0));
  REQUIRE(!(*prod)->flush(30s));

  healed = false;
  auto cfg = kk::parse(
    config_text(cluster.bootstrap_servers(), "mark", "memory"), "out.toml");
  REQUIRE(cfg);
  commit_log commits;
  auto src = kk::source::start(
    std::move(*cfg),
    [](const keylane::handler_params&) { return std::make_unique<healing>(); },
    {}, commits.listener());
  REQUIRE(src);
  commits.src = src->get();
  // 0-2 ok; 3 fails and parks the key, 4 and 5 park behind it: six
  // output records, three of them marked "parked".
  REQUIRE(wait_until([&] { return (*src)->stats().delivered == 6; }, 60s));
  // A record of another partition, committed after those deliveries:
  // the commit round that took it saw partition 0 as it is now.
  REQUIRE(!(*prod)->produce("in", "b", "0", {}, 1));
  REQUIRE(!(*prod)->flush(30s));
  REQUIRE(wait_until([&] { return commits.committed(1) == 1; }, 60s));
  CHECK(commits.committed(0) == 3);

  healed = true;
  auto replayed = (*src)->lanes().replay(keylane::key{"a"});
  REQUIRE(replayed);
  CHECK(*replayed == 3);
  REQUIRE(wait_until([&] { return commits.committed(0) == 6; }, 60s));
  (*src)->stop();

  auto out = kafka_test::read_topic(cluster.bootstrap_servers(), "out", 1,
                                    10, 30s);
  std::vector<std::string> seen;
  for (auto& r : out)
    if (r.key == "a")
      seen.push_back(r.header("keylane.outcome") + ":" + r.value);
  CHECK(seen
        == std::vector<std::string>{"ok:done:0", "ok:done:1", "ok:done:2",
                                    "parked:", "parked:", "parked:",
                                    "ok:done:3", "ok:done:4", "ok:done:5"});
}
