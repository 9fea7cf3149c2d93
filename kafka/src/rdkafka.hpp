// SPDX-License-Identifier: Apache-2.0
#pragma once

// keylane::kafka's one home of librdkafka's object lifetimes (private;
// this build's Kafka tests and benchmarks reach it through the CMake target
// keylane_kafka_rdkafka): an owner with a deleter for each librdkafka object
// the code keeps, and helpers for the calls many files repeat. No
// `rd_kafka_*_destroy` is called outside this header and rdkafka.cpp;
// other calls go to librdkafka directly, through an owner's `get()`.
//
// An owner only frees. Where an order matters it stays the caller's: a
// source's consumer leaves its group (`rd_kafka_consumer_close`) on its
// polling thread, so the revoke callback runs there, and `source::stop`
// destroys it later (a `reset()`); messages and topic handles go before
// their client.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include <caf/error.hpp>
#include <caf/expected.hpp>
#include <librdkafka/rdkafka.h>

#include "keylane/kafka/detail/rdkafka_owner.hpp"

// rd_kafka_seek_partitions and the incremental (cooperative) assignment
// calls came with 1.6; Debian 12 has 2.0.2.
static_assert(RD_KAFKA_VERSION >= 0x010600ff,
              "keylane::kafka needs librdkafka 1.6 or newer");

namespace keylane::kafka::detail {

/// A deleter calling librdkafka's `Destroy` for `T`.
template <class T, void (*Destroy)(T*)>
struct rdkafka_deleter {
  void operator()(T* p) const noexcept { Destroy(p); }
};

} // namespace keylane::kafka::detail

namespace keylane::kafka::rdkafka {

// -- owners -------------------------------------------------------------------

/// A client: consumer or producer (`rd_kafka_new`).
using client_ptr = detail::rdkafka_client_ptr;
/// A mock cluster (`rd_kafka_mock_cluster_new`), to go before its client.
using mock_ptr = detail::rdkafka_mock_ptr;
/// An owner of `T` that frees it with `Destroy`.
template <class T, void (*Destroy)(T*)>
using owner = std::unique_ptr<T, detail::rdkafka_deleter<T, Destroy>>;

/// A configuration not (yet) taken by `rd_kafka_new`.
using conf_ptr = owner<rd_kafka_conf_t, rd_kafka_conf_destroy>;
/// A topic handle (`rd_kafka_topic_new`), to go before its client.
using topic_ptr = owner<rd_kafka_topic_t, rd_kafka_topic_destroy>;
/// A list of topic partitions.
using list_ptr = owner<rd_kafka_topic_partition_list_t,
                       rd_kafka_topic_partition_list_destroy>;
/// A consumed message (or consumer event), to go before its client.
using message_ptr = owner<rd_kafka_message_t, rd_kafka_message_destroy>;
/// Headers of a message to produce: `rd_kafka_producev` takes them only
/// when it succeeds, so `release()` them then.
using headers_ptr = owner<rd_kafka_headers_t, rd_kafka_headers_destroy>;
/// An error object, as the newer calls return them (null: no error).
using error_ptr = owner<rd_kafka_error_t, rd_kafka_error_destroy>;
/// Cluster metadata (`rd_kafka_metadata`).
using metadata_ptr =
  owner<const rd_kafka_metadata_t, rd_kafka_metadata_destroy>;

// -- errors -------------------------------------------------------------------

/// librdkafka's text for `err`.
[[nodiscard]] inline std::string to_string(rd_kafka_resp_err_t err) {
  return rd_kafka_err2str(err);
}

/// The text of error object `e` (not null).
[[nodiscard]] inline std::string to_string(const error_ptr& e) {
  return rd_kafka_error_string(e.get());
}

// -- configuration and clients ------------------------------------------------

/// A new, empty configuration.
[[nodiscard]] inline conf_ptr new_conf() {
  return conf_ptr{rd_kafka_conf_new()};
}

/// Sets property `name` to `value`; librdkafka's reason when it refuses.
[[nodiscard]] std::optional<std::string>
set(rd_kafka_conf_t& conf, const std::string& name, const std::string& value);

/// Sets property `name` to `value`; when librdkafka refuses, an
/// `invalid_config` error "<origin>: <what> property <name> = "<value>":
/// <reason>" (`what`: "kafka", "kafka output", ...).
[[nodiscard]] caf::error set(rd_kafka_conf_t& conf, const std::string& name,
                             const std::string& value,
                             const std::string& origin, const char* what);

/// A client of `type` made from `conf`, which is gone after the call either
/// way (librdkafka takes it only when it succeeds). On failure: null, and
/// librdkafka's reason in `why`.
[[nodiscard]] client_ptr new_client(rd_kafka_type_t type, conf_ptr conf,
                                    std::string& why);

/// As above; on failure a `startup_failed` error "<what>: <reason>".
[[nodiscard]] caf::expected<client_ptr>
new_client(rd_kafka_type_t type, conf_ptr conf, const std::string& what);

// -- topics, partitions, messages ---------------------------------------------

/// A topic handle of `rk` for `topic`, default topic settings.
[[nodiscard]] inline topic_ptr new_topic(rd_kafka_t* rk,
                                         const std::string& topic) {
  return topic_ptr{rd_kafka_topic_new(rk, topic.c_str(), nullptr)};
}

/// An empty partition list with room for `size` elements.
[[nodiscard]] inline list_ptr new_list(int size) {
  return list_ptr{rd_kafka_topic_partition_list_new(size)};
}

/// Appends `topic`/`partition` to `l`; the new element (to set its offset).
inline rd_kafka_topic_partition_t&
add(rd_kafka_topic_partition_list_t& l, const std::string& topic,
    int32_t partition) {
  return *rd_kafka_topic_partition_list_add(&l, topic.c_str(), partition);
}

/// A consumer's next message or event; null when none came within
/// `timeout_ms`.
[[nodiscard]] inline message_ptr consumer_poll(rd_kafka_t* rk,
                                               int timeout_ms) {
  return message_ptr{rd_kafka_consumer_poll(rk, timeout_ms)};
}

/// Empty headers with room for `size`.
[[nodiscard]] inline headers_ptr new_headers(size_t size) {
  return headers_ptr{rd_kafka_headers_new(size)};
}

} // namespace keylane::kafka::rdkafka
