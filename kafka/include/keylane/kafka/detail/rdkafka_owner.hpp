// SPDX-License-Identifier: Apache-2.0
#pragma once

// Owners of the librdkafka objects that public classes keep (producer,
// mock_cluster), declared without librdkafka's headers: their deleters are
// defined in the library (kafka/src/rdkafka.cpp), beside the private
// adapter kafka/src/rdkafka.hpp, which owns every other librdkafka type.

#include <memory>

struct rd_kafka_s;
struct rd_kafka_mock_cluster_s;

namespace keylane::kafka::detail {

/// Destroys a librdkafka client (`rd_kafka_destroy`, which blocks until its
/// threads ended; a consumer still in its group leaves it first).
struct rdkafka_client_deleter {
  void operator()(rd_kafka_s* rk) const noexcept;
};

/// Destroys a mock cluster (`rd_kafka_mock_cluster_destroy`); it must go
/// before the client it was made with.
struct rdkafka_mock_deleter {
  void operator()(rd_kafka_mock_cluster_s* mc) const noexcept;
};

/// Owns one librdkafka client (`rd_kafka_t`).
using rdkafka_client_ptr = std::unique_ptr<rd_kafka_s, rdkafka_client_deleter>;

/// Owns one mock cluster (`rd_kafka_mock_cluster_t`).
using rdkafka_mock_ptr =
  std::unique_ptr<rd_kafka_mock_cluster_s, rdkafka_mock_deleter>;

} // namespace keylane::kafka::detail
