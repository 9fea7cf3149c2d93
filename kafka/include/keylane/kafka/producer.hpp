// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <caf/error.hpp>
#include <caf/expected.hpp>

#include "keylane/kafka/detail/rdkafka_owner.hpp"

namespace keylane::kafka {

/// An idempotent Kafka producer (`enable.idempotence=true`): records of one
/// partition land in the order they were produced, without duplicates from
/// its own retries. For feeding topics (the example, tests) and for writing
/// results from a source's output callback to an output topic.
///
/// Thread-safety: `produce` may be called from many threads; the order of
/// one partition's records is the order their `produce` calls returned.
class producer {
public:
  /// Header name and value.
  using header = std::pair<std::string, std::string>;

  /// Connects to `bootstrap_servers`; `properties` pass to librdkafka.
  [[nodiscard]] static caf::expected<std::unique_ptr<producer>>
  start(const std::string& bootstrap_servers,
        const std::map<std::string, std::string>& properties = {});

  /// Flushes (up to 10 s) and closes.
  ~producer();
  producer(const producer&) = delete;
  producer& operator=(const producer&) = delete;

  /// Queues one record (partition -1: by the key's hash, as Kafka's default
  /// partitioner does). Waits while the local queue is full.
  caf::error produce(const std::string& topic, std::string_view key,
                     std::string_view value,
                     const std::vector<header>& headers = {},
                     int32_t partition = -1);

  /// Waits until every queued record was acknowledged or failed; an
  /// error on timeout.
  caf::error flush(std::chrono::milliseconds timeout);

  /// Records the brokers acknowledged, and those that failed for good.
  [[nodiscard]] uint64_t delivered() const noexcept { return delivered_; }
  [[nodiscard]] uint64_t failed() const noexcept { return failed_; }

private:
  producer() = default;
  std::atomic<uint64_t> delivered_{0};
  std::atomic<uint64_t> failed_{0};
  // Last, so it is destroyed first: its delivery reports count above.
  detail::rdkafka_client_ptr rk_;
};

} // namespace keylane::kafka
