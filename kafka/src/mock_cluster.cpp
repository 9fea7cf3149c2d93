// SPDX-License-Identifier: Apache-2.0
#include "keylane/kafka/mock_cluster.hpp"

#include "keylane/errc.hpp"
#include "rdkafka.hpp"

// After rdkafka.h (which rdkafka.hpp includes), as it requires.
#include <librdkafka/rdkafka_mock.h>

namespace keylane::kafka {

namespace {

caf::error check(rd_kafka_resp_err_t err, const std::string& what) {
  if (!err)
    return caf::none;
  return make_error(errc::startup_failed,
                    "mock cluster: " + what + ": " + rdkafka::to_string(err));
}

} // namespace

caf::expected<std::unique_ptr<mock_cluster>> mock_cluster::start(int brokers) {
  // The cluster lives in a handle of its own; a producer handle is the
  // lightest one (it never connects anywhere).
  auto conf = rdkafka::new_conf();
  (void) rdkafka::set(*conf, "log_level", "3"); // a valid setting
  auto rk = rdkafka::new_client(RD_KAFKA_PRODUCER, std::move(conf),
                                "mock cluster");
  if (!rk)
    return std::move(rk.error());
  rdkafka::mock_ptr mc{rd_kafka_mock_cluster_new(rk->get(), brokers)};
  if (!mc)
    return make_error(errc::startup_failed,
                      "mock cluster: cannot start the brokers");
  std::unique_ptr<mock_cluster> out{new mock_cluster};
  out->bootstraps_ = rd_kafka_mock_cluster_bootstraps(mc.get());
  out->rk_ = std::move(*rk);
  out->mc_ = std::move(mc);
  return out;
}

// The cluster, then its client (members go in reverse order).
mock_cluster::~mock_cluster() = default;

caf::error mock_cluster::create_topic(const std::string& topic,
                                      int partitions, int replication) {
  return check(rd_kafka_mock_topic_create(mc_.get(), topic.c_str(), partitions,
                                          replication),
               "create topic " + topic);
}

void mock_cluster::push_request_errors(int16_t api_key,
                                       const std::vector<int>& errors) {
  std::vector<rd_kafka_resp_err_t> errs;
  for (int e : errors)
    errs.push_back(static_cast<rd_kafka_resp_err_t>(e));
  rd_kafka_mock_push_request_errors_array(mc_.get(), api_key, errs.size(),
                                          errs.data());
}

caf::error mock_cluster::set_leader(const std::string& topic,
                                    int32_t partition, int32_t broker_id) {
  return check(rd_kafka_mock_partition_set_leader(mc_.get(), topic.c_str(),
                                                  partition, broker_id),
               "set leader");
}

caf::error mock_cluster::set_broker_up(int32_t broker_id, bool up) {
  return check(up ? rd_kafka_mock_broker_set_up(mc_.get(), broker_id)
                  : rd_kafka_mock_broker_set_down(mc_.get(), broker_id),
               "broker " + std::to_string(broker_id));
}

caf::error mock_cluster::set_coordinator(const std::string& group,
                                         int32_t broker_id) {
  return check(rd_kafka_mock_coordinator_set(mc_.get(), "group", group.c_str(),
                                             broker_id),
               "coordinator");
}

} // namespace keylane::kafka
