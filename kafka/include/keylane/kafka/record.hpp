// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include <caf/meta/type_name.hpp>

#include "keylane/stateful_handler.hpp"

namespace keylane::kafka {

/// One Kafka record as a keylane payload: where it came from (so a handler
/// can deduplicate redeliveries by topic, partition and offset), its key,
/// value and headers. Plain data; copies are independent. Keyed state
/// (`stateful_handler`) counts each record once by its partition and
/// offset (see `state_origin<kafka::record>` below).
struct record {
  /// The topic it was read from.
  std::string topic;
  /// Its partition.
  int32_t partition = 0;
  /// Its offset in the partition: with `topic` and `partition`, unique.
  int64_t offset = 0;
  /// The record key as bytes (empty for a record without a key).
  std::string key;
  /// The record value as bytes.
  std::string value;
  /// The record timestamp in milliseconds since the epoch (-1: none).
  int64_t timestamp_ms = -1;
  /// The record headers, in their order (values as bytes).
  std::vector<std::pair<std::string, std::string>> headers;
  /// Which assignment of the partition to this consumer took it; the source
  /// uses it to ignore completions of a partition it has since given up.
  uint64_t assignment = 0;

  /// The last value of header `name`, or nullptr.
  [[nodiscard]] const std::string* header(const std::string& name) const {
    for (auto i = headers.rbegin(); i != headers.rend(); ++i)
      if (i->first == name)
        return &i->second;
    return nullptr;
  }
};

/// Lets CAF serialise a record, which gives it a `keylane::codec` for the
/// durable park store (`park.store = "sqlite"`).
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, record& x) {
  return f(caf::meta::type_name("keylane.kafka.record"), x.topic,
           x.partition, x.offset, x.key, x.value, x.timestamp_ms, x.headers,
           x.assignment);
}

} // namespace keylane::kafka

/// A Kafka record's place in a replayable source: the stream is
/// "<topic>/<partition>", the position its offset. With it keyed state
/// stores, atomically with each key's state, the offset of the last record
/// it applied per partition, and a redelivered record at or below it ends
/// as `skipped` instead of changing the state again.
template <>
struct keylane::state_origin<keylane::kafka::record> {
  static constexpr bool available = true;

  /// Names `r`'s partition and offset; always true.
  static bool of(const keylane::kafka::record& r, std::string& stream,
                 int64_t& position) {
    stream = r.topic;
    stream += '/';
    stream += std::to_string(r.partition);
    position = r.offset;
    return true;
  }
};
