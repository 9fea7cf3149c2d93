// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <caf/error.hpp>
#include <caf/expected.hpp>

#include "keylane/kafka/detail/rdkafka_owner.hpp"

namespace keylane::kafka {

/// An in-process Kafka cluster: librdkafka's mock brokers, each a real
/// Kafka protocol endpoint on a loopback port it picks itself, so other
/// processes can join it through `bootstrap_servers()`. For tests, demos
/// and the example; it keeps data in memory only. Its fault injection
/// (request errors, leader moves, brokers down) exercises a source's
/// recovery paths.
///
/// Thread-safety: every member may be called from any thread (librdkafka
/// serialises them onto the cluster's own thread).
class mock_cluster {
public:
  /// Starts `brokers` brokers (ids 1..brokers).
  [[nodiscard]] static caf::expected<std::unique_ptr<mock_cluster>>
  start(int brokers = 3);

  ~mock_cluster();
  mock_cluster(const mock_cluster&) = delete;
  mock_cluster& operator=(const mock_cluster&) = delete;

  /// "127.0.0.1:port,..." of every broker.
  [[nodiscard]] const std::string& bootstrap_servers() const noexcept {
    return bootstraps_;
  }

  /// Creates `topic` with `partitions` partitions.
  caf::error create_topic(const std::string& topic, int partitions,
                          int replication = 1);

  /// Makes the next requests of Kafka API `api_key` (0 Produce, 1 Fetch,
  /// 8 OffsetCommit, 12 Heartbeat, ...) fail with `errors` (librdkafka
  /// `rd_kafka_resp_err_t` values), one each, in order.
  void push_request_errors(int16_t api_key, const std::vector<int>& errors);

  /// Moves the leadership of a partition to broker `broker_id`.
  caf::error set_leader(const std::string& topic, int32_t partition,
                        int32_t broker_id);

  /// Takes broker `broker_id` down (connections close, none accepted) or
  /// brings it back up.
  caf::error set_broker_up(int32_t broker_id, bool up);

  /// Makes broker `broker_id` the group coordinator of `group`.
  caf::error set_coordinator(const std::string& group, int32_t broker_id);

private:
  mock_cluster() = default;
  // The cluster after the client that holds it: destroyed before it.
  detail::rdkafka_client_ptr rk_;
  detail::rdkafka_mock_ptr mc_;
  std::string bootstraps_;
};

} // namespace keylane::kafka
