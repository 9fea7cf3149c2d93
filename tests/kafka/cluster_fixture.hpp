// SPDX-License-Identifier: Apache-2.0
#pragma once

// A mock Kafka cluster with one topic, a producer of account events
// ("acct-<k>" keys, values "acct-<k>:<n>" numbered per key), config files
// for member processes, and their logs in a fresh directory.

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <unistd.h>

#include "keylane/kafka/mock_cluster.hpp"
#include "keylane/kafka/producer.hpp"
#include "member_logs.hpp"
#include "member_path.hpp"
#include "member_process.hpp"

namespace kafka_test {

class cluster_fixture {
public:
  explicit cluster_fixture(std::string assignor, int partitions = 6,
                           int brokers = 3)
    : assignor_(std::move(assignor)) {
    static int runs = 0;
    dir_ = std::filesystem::temp_directory_path()
           / ("keylane-kafka-" + std::to_string(::getpid()) + "-"
              + std::to_string(++runs));
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
    auto mc = keylane::kafka::mock_cluster::start(brokers);
    if (mc)
      cluster_ = std::move(*mc);
    if (cluster_ && !cluster_->create_topic(topic, partitions)) {
      // A broker that comes back is reconnected within a second, not after
      // librdkafka's default backoff of up to 10 s.
      auto p = keylane::kafka::producer::start(
        cluster_->bootstrap_servers(), {{"reconnect.backoff.max.ms", "1000"}});
      if (p)
        producer_ = std::move(*p);
    }
  }

  ~cluster_fixture() {
    members_.clear(); // kills what still runs before the cluster goes
    producer_.reset();
    cluster_.reset();
    // KEYLANE_KEEP_TEST_DIR=1 keeps the logs, configs and stores to look at.
    if (std::getenv("KEYLANE_KEEP_TEST_DIR"))
      return;
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }

  static constexpr const char* topic = "ledger";

  [[nodiscard]] bool ready() const { return cluster_ && producer_; }
  keylane::kafka::mock_cluster& cluster() { return *cluster_; }

  /// Produces `per_key` further events for each of `keys` accounts,
  /// interleaved, and waits until the cluster acknowledged them.
  bool produce(int keys, int per_key) {
    std::vector<std::pair<std::string, std::string>> records;
    for (int n = 0; n < per_key; ++n)
      for (int k = 0; k < keys; ++k) {
        auto key = "acct-" + std::to_string(k);
        auto value = key + ":" + std::to_string(next_[key]++);
        produced_.insert(value);
        records.emplace_back(std::move(key), std::move(value));
      }
    return produce_records(records);
  }

  /// Produces `records` (key, value) in order, and waits until the
  /// cluster acknowledged them.
  bool produce_records(
    const std::vector<std::pair<std::string, std::string>>& records) {
    for (const auto& [key, value] : records)
      if (producer_->produce(topic, key, value))
        return false;
    // Delivery after injected faults may take a while on a loaded machine;
    // a flush that times out leaves the records queued (nothing is dropped,
    // and the tests check that every one arrives), so wait some more.
    for (int i = 0; i < 4; ++i)
      if (!producer_->flush(std::chrono::seconds(30)))
        return true;
    return false;
  }

  /// Starts a member whose handler takes up to `max_delay_ms` per record.
  member_process& start_member(int max_delay_ms = 5) {
    return start_member_with(config_text(max_delay_ms));
  }

  /// Starts a member with the config file `text`.
  member_process& start_member_with(const std::string& text) {
    auto n = std::to_string(members_.size());
    auto cfg = (dir_ / ("member-" + n + ".toml")).string();
    std::ofstream{cfg} << text;
    auto log = (dir_ / ("member-" + n + ".log")).string();
    logs_.push_back(log);
    members_.push_back(
      std::make_unique<member_process>(member_path(), cfg, log));
    return *members_.back();
  }

  /// The fixture's fresh directory (removed with it).
  [[nodiscard]] const std::filesystem::path& dir() const noexcept {
    return dir_;
  }

  /// The `[kafka]` table and `[kafka.properties]` every member uses.
  [[nodiscard]] std::string kafka_tables(int commit_interval_ms = 100) const {
    return "[kafka]\nbootstrap_servers = \""
           + cluster_->bootstrap_servers() + "\"\ngroup = \"ledger\"\n"
           + "topics = [\"" + topic + "\"]\ncommit_interval_ms = "
           + std::to_string(commit_interval_ms) + "\n"
           + "revoke_timeout_ms = 2000\n\n[kafka.properties]\n"
           + "\"session.timeout.ms\" = 3000\n"
           + "\"heartbeat.interval.ms\" = 300\n"
           + "\"max.poll.interval.ms\" = 10000\n"
           + "\"partition.assignment.strategy\" = \"" + assignor_ + "\"\n"
           + "\"log_level\" = 2\n";
  }

  [[nodiscard]] member_logs logs() const { return member_logs::read(logs_); }
  [[nodiscard]] const std::set<std::string>& produced() const {
    return produced_;
  }

  /// True once every produced record finished and was committed.
  [[nodiscard]] bool all_committed() const {
    auto l = logs();
    return l.values().size() >= produced_.size()
           && l.committed_total() >= static_cast<int64_t>(produced_.size());
  }

  /// True once a member's log shows `n` finished records.
  [[nodiscard]] static bool finished_at_least(const member_process& m,
                                              size_t n) {
    return member_logs::read({m.log()}).finished.size() >= n;
  }

  /// True once `m` has finished a record since its log said "R".
  [[nodiscard]] static bool working(const member_process& m) {
    return finished_at_least(m, 1);
  }

private:
  std::string config_text(int max_delay_ms) const {
    // Small window and backlog so backpressure (pause/resume) happens;
    // short session timeouts: the mock waits session.timeout.ms - 1 s on
    // every join and leave.
    return "[runtime]\norder = \"none\"\nwindow = 32\nkey_backlog = 8\n"
           "max_active_keys = 16\n\n[scheduler]\nthreads = 2\n\n"
           "[handler]\nname = \"slow_echo\"\n\n[handler.slow_echo]\n"
           "max_delay_ms = "
           + std::to_string(max_delay_ms) + "\n\n" + kafka_tables();
  }

  std::string assignor_;
  std::filesystem::path dir_;
  std::unique_ptr<keylane::kafka::mock_cluster> cluster_;
  std::unique_ptr<keylane::kafka::producer> producer_;
  std::map<std::string, int> next_;
  std::set<std::string> produced_;
  std::vector<std::string> logs_;
  std::vector<std::unique_ptr<member_process>> members_;
};

} // namespace kafka_test
