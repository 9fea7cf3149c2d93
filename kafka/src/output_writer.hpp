// SPDX-License-Identifier: Apache-2.0
#pragma once

// The producer behind a source's output topic (private to keylane::kafka).

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include <caf/expected.hpp>

#include "keylane/kafka/source_settings.hpp"
#include "rdkafka.hpp"

namespace keylane::kafka {

/// Which input record an output record answers, handed back with its
/// delivery report so the source can finish the input's offset.
struct output_ticket {
  std::string topic;
  int32_t partition = 0;
  int64_t offset = 0;
  uint64_t assignment = 0;
  /// False for an event parked in memory: its output is written, but its
  /// offset waits for the replay.
  bool finishes = true;
};

/// An idempotent producer (`enable.idempotence=true`) for the output topic,
/// with one thread of its own serving delivery reports.
///
/// Thread-safety: `write` is called by one thread (the runtime's consumer
/// thread), so one partition's records land in the order of the calls;
/// `on_delivery` runs on the writer's thread, once per written record,
/// after the broker acknowledged it or it failed for good.
class output_writer {
public:
  /// Called with the ticket of each record and how its delivery ended.
  using delivery_fn =
    std::function<void(const output_ticket&, rd_kafka_resp_err_t)>;

  /// A header name and value.
  using header = std::pair<std::string, std::string>;

  /// Connects to `s.bootstrap_servers` with `s.output_properties`.
  [[nodiscard]] static caf::expected<std::unique_ptr<output_writer>>
  start(const source_settings& s, delivery_fn on_delivery);

  /// Calls `close` with a 10 s flush if needed.
  ~output_writer();
  output_writer(const output_writer&) = delete;
  output_writer& operator=(const output_writer&) = delete;

  /// Queues one record to the output topic, keyed by `key` (none when
  /// empty), waiting while librdkafka's local queue is full. On an error
  /// the record was not queued and `on_delivery` will not see it.
  rd_kafka_resp_err_t write(std::string_view key, std::string_view value,
                            const std::vector<header>& headers,
                            output_ticket ticket);

  /// Waits up to `timeout` for outstanding deliveries, then stops.
  void close(std::chrono::milliseconds timeout);

private:
  output_writer() = default;
  /// Both destroyed by `close`, the topic handle first.
  rdkafka::client_ptr rk_;
  rdkafka::topic_ptr topic_;
  delivery_fn on_delivery_;
  std::thread poller_;
  std::atomic<bool> stopping_{false};
};

} // namespace keylane::kafka
