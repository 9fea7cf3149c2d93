// SPDX-License-Identifier: Apache-2.0
// A source's counters in the host's own Prometheus setup
// (keylane/kafka/metrics.hpp), against librdkafka's mock cluster: the
// keylane_kafka_* families beside the runtime's, values that follow the
// records, promtool's check, and nothing once the source stopped.

#include <catch2/catch.hpp>

#include <chrono>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <prometheus/text_serializer.h>

#include "../prom_text.hpp"
#include "../promtool.hpp"
#include "keylane/kafka/config_loader.hpp"
#include "keylane/kafka/metrics.hpp"
#include "keylane/kafka/mock_cluster.hpp"
#include "keylane/kafka/producer.hpp"
#include "keylane/kafka/source.hpp"
#include "member_process.hpp"

using namespace std::chrono_literals;
namespace kk = keylane::kafka;
using kafka_test::wait_until;

namespace {

// Holds every record's completion until the test releases them, so the
// records stay unfinished meanwhile.
struct held_records {
  std::mutex mu;
  std::vector<keylane::completion<std::string>> held;
  bool released = false;

  void release() {
    std::vector<keylane::completion<std::string>> now;
    {
      std::lock_guard<std::mutex> guard{mu};
      released = true;
      now.swap(held);
    }
    for (auto& done : now)
      done.ok("done");
  }
};

held_records holding;

struct holder : keylane::handler<kk::record, std::string> {
  void on_event(kk::record&, keylane::completion<std::string> done) override {
    std::unique_lock<std::mutex> guard{holding.mu};
    if (!holding.released)
      return holding.held.push_back(std::move(done));
    guard.unlock();
    done.ok("done");
  }
};

std::string config_text(const std::string& bootstrap) {
  return "[runtime]\norder = \"none\"\n\n[park]\nstore = \"none\"\n\n"
         "[scheduler]\nthreads = 2\n\n[handler]\nname = \"holder\"\n\n"
         "[kafka]\nbootstrap_servers = \"" + bootstrap + "\"\n"
         "group = \"metrics-test\"\ntopics = [\"in\"]\n"
         "commit_interval_ms = 50\n\n"
         "[kafka.properties]\n\"session.timeout.ms\" = 3000\n"
         "\"heartbeat.interval.ms\" = 300\n\"log_level\" = 2\n";
}

std::vector<prometheus::MetricFamily>
both(const std::shared_ptr<prometheus::Collectable>& a,
     const std::shared_ptr<prometheus::Collectable>& b) {
  auto out = a->Collect();
  for (auto& f : b->Collect())
    out.push_back(std::move(f));
  return out;
}

} // namespace

TEST_CASE("a source's collectable gives its commits, assignments and lag "
          "as keylane_kafka_* metrics beside the runtime's",
          "[kafka][metrics]") {
  auto mc = kk::mock_cluster::start(1);
  REQUIRE(mc);
  auto& cluster = **mc;
  REQUIRE(!cluster.create_topic("in", 2));
  auto prod = kk::producer::start(cluster.bootstrap_servers());
  REQUIRE(prod);
  constexpr int n = 40;
  for (int i = 0; i < n; ++i)
    REQUIRE(!(*prod)->produce("in", "k" + std::to_string(i % 4),
                              std::to_string(i)));
  REQUIRE(!(*prod)->flush(30s));

  auto cfg = kk::parse(config_text(cluster.bootstrap_servers()),
                       "metrics.toml");
  REQUIRE(cfg);
  auto src = kk::source::start(std::move(*cfg), [](const auto&) {
    return std::make_unique<holder>();
  });
  REQUIRE(src);
  auto kafka_metrics = kk::metrics_collectable(**src);
  auto runtime_metrics = keylane::metrics_collectable((*src)->lanes());

  // Every record taken, none finished: the whole topic is lag.
  REQUIRE(wait_until([&] { return (*src)->stats().submitted >= n; }, 60s));
  auto lagging = prom_text::parse(
    prometheus::TextSerializer{}.Serialize(kafka_metrics->Collect()));
  CHECK(lagging.at("keylane_kafka_lag") == n);
  CHECK(lagging.at("keylane_kafka_finished_total") == 0);

  holding.release();
  REQUIRE(wait_until([&] { return (*src)->stats().finished >= n; }, 60s));
  REQUIRE(wait_until([&] { return (*src)->stats().commits >= 1; }, 30s));

  auto text = prometheus::TextSerializer{}.Serialize(
    both(kafka_metrics, runtime_metrics));
  INFO(text);
  auto e = prom_text::parse(text);
  REQUIRE(e.malformed.empty());
  CHECK(e.at("keylane_kafka_consumed_total") == n);
  CHECK(e.at("keylane_kafka_finished_total") == n);
  CHECK(e.at("keylane_kafka_commits_total") >= 1);
  CHECK(e.at("keylane_kafka_commit_failures_total") == 0);
  CHECK(e.at("keylane_kafka_assigned_total") >= 1);
  CHECK(e.at("keylane_kafka_revoked_total") == 0);
  CHECK(e.at("keylane_kafka_pauses_total") == 0);
  CHECK(e.at("keylane_kafka_lag") == 0);
  CHECK(e.types["keylane_kafka_lag"] == "gauge");
  CHECK(e.at("keylane_accepted_total") == n);
  auto check = promtool::check(text);
  INFO(check.output);
  CHECK(check.ok);

  (*src)->stop();
  CHECK(kafka_metrics->Collect().empty());
  CHECK(runtime_metrics->Collect().empty());
}
