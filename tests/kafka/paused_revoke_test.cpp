// SPDX-License-Identifier: Apache-2.0
// librdkafka keeps a partition's pause across a revoke and a new
// assignment. A source pauses a partition while the runtime refuses its
// records; revoked in that state and assigned back, the partition must
// fetch again. (It once was resumed on assign instead, and that resume
// could cancel the assignment's own fetch start: see rebalance.cpp.)

#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <utility>

#include "keylane/kafka/config_loader.hpp"
#include "keylane/kafka/mock_cluster.hpp"
#include "keylane/kafka/producer.hpp"
#include "keylane/kafka/source.hpp"
#include "member_process.hpp"

using namespace std::chrono_literals;
namespace kk = keylane::kafka;
using kafka_test::wait_until;

namespace {

/// Answers its record's value once `open` is set: until then every event
/// waits (through run_later, holding no thread), so the runtime fills and
/// refuses, and the source pauses both partitions.
struct gated : keylane::handler<kk::record, std::string> {
  explicit gated(std::shared_ptr<std::atomic<bool>> open)
    : open_(std::move(open)) {}

  void on_event(kk::record& r,
                keylane::completion<std::string> done) override {
    answer(r.value,
           std::make_shared<keylane::completion<std::string>>(std::move(done)));
  }

  void answer(std::string value,
              std::shared_ptr<keylane::completion<std::string>> done) {
    if (open_->load())
      return done->ok(value);
    run_later(20ms, [this, value = std::move(value), done]() mutable {
      answer(std::move(value), std::move(done));
    });
  }

  std::shared_ptr<std::atomic<bool>> open_;
};

std::string config_text(const std::string& bootstrap) {
  // One active key, one waiting event per key and a window of two: the
  // third record of a partition is refused at once.
  return "[runtime]\norder = \"none\"\nmax_active_keys = 1\nkey_backlog = 1\n"
         "window = 2\n\n[scheduler]\nthreads = 2\n\n"
         "[handler]\nname = \"gated\"\n\n"
         "[kafka]\nbootstrap_servers = \"" + bootstrap + "\"\n"
         "group = \"paused-revoke-test\"\ntopics = [\"in\"]\n"
         "commit_interval_ms = 50\nrevoke_timeout_ms = 200\n\n"
         "[kafka.properties]\n\"session.timeout.ms\" = 3000\n"
         "\"heartbeat.interval.ms\" = 300\n\"fetch.wait.max.ms\" = 10\n"
         "\"partition.assignment.strategy\" = \"range\"\n"
         "\"log_level\" = 2\n";
}

uint64_t owned(const std::unique_ptr<kk::source>& s) {
  auto st = s->stats();
  return st.assigned - st.revoked;
}

} // namespace

TEST_CASE("a partition paused when it is revoked fetches again when it is "
          "assigned back",
          "[kafka][rebalance]") {
  auto mc = kk::mock_cluster::start(1);
  REQUIRE(mc);
  auto& cluster = **mc;
  REQUIRE(!cluster.create_topic("in", 2));
  auto prod = kk::producer::start(cluster.bootstrap_servers());
  REQUIRE(prod);
  constexpr int per_partition = 10;

  std::mutex mu;
  std::set<std::pair<std::string, std::string>> answered;
  auto open = std::make_shared<std::atomic<bool>>(false);
  auto start = [&](std::unique_ptr<kk::source>& m, const char* name) {
    auto cfg = kk::parse(config_text(cluster.bootstrap_servers()), name);
    REQUIRE(cfg);
    auto src = kk::source::start(
      std::move(*cfg),
      [open](const keylane::handler_params&) {
        return std::make_unique<gated>(open);
      },
      [&](kk::record_event& ev) {
        if (!ev.result)
          return;
        std::lock_guard<std::mutex> guard{mu};
        answered.emplace(ev.payload.key, *ev.result);
      });
    REQUIRE(src);
    m = std::move(*src);
  };

  // A owns both partitions; with the gate shut each partition's third
  // record is refused, and both partitions are paused.
  std::unique_ptr<kk::source> a, b;
  start(a, "a.toml");
  REQUIRE(wait_until([&] { return owned(a) == 2; }, 30s));
  for (int n = 0; n < per_partition; ++n)
    for (int part = 0; part < 2; ++part)
      REQUIRE(!(*prod)->produce("in", "k" + std::to_string(part),
                                std::to_string(n), {}, part));
  REQUIRE(!(*prod)->flush(10s));
  REQUIRE(wait_until(
    [&] {
      auto st = a->stats();
      return st.pauses - st.resumes == 2;
    },
    30s));

  // B joins. An eager rebalance revokes both partitions from A while they
  // are paused, and gives one of them back to A.
  start(b, "b.toml");
  REQUIRE(wait_until([&] { return owned(a) == 1 && owned(b) == 1; }, 30s));
  open->store(true);

  // Every record is answered, by A or by B: the partition A got back was
  // read again. Without lifting its pause it never fetched.
  auto all = [&] {
    std::lock_guard<std::mutex> guard{mu};
    return answered.size() == 2 * per_partition;
  };
  bool done = wait_until(all, 30s);
  {
    std::lock_guard<std::mutex> guard{mu};
    INFO("answered " << answered.size() << " of " << 2 * per_partition);
    CHECK(done);
  }
  b->stop();
  a->stop();
}
