// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstddef>
#include <map>
#include <string>
#include <vector>

namespace keylane::kafka {

/// Where a record's keylane key comes from.
enum class key_from {
  /// The record key (a record without one is keyed by "topic/partition",
  /// so such records keep their partition's order).
  record_key,
  /// The last value of a header (`kafka.key = "header:<name>"`); a record
  /// without that header is keyed as if it had no key.
  header,
};

/// What the output topic gets for an event that ended without a result
/// (skipped, failed or parked: a keylane tombstone).
enum class tombstone_output {
  /// A record with an empty value and the header `keylane.outcome` saying
  /// "skipped", "failed" or "parked" (and `keylane.error` with the reason),
  /// so a reader of the output topic sees every input record answered.
  mark,
  /// No record; the offset finishes when the event ends.
  skip,
};

/// Every knob of a Kafka source, with its default; the `[kafka]` table of
/// the config file fills it (see `kafka/config_loader.hpp`).
struct source_settings {
  /// `bootstrap.servers`: "host:port[,host:port...]". Required.
  std::string bootstrap_servers;

  /// `group.id` of the consumer group. Required.
  std::string group;

  /// Topics to consume (at least one).
  std::vector<std::string> topics;

  /// What keys the records.
  key_from key = key_from::record_key;

  /// The header name when `key == key_from::header`.
  std::string key_header;

  /// How often finished offsets are committed, in milliseconds.
  size_t commit_interval_ms = 1000;

  /// How long a revoked partition's in-flight events may take to finish
  /// before the partition is released anyway (what did not finish is not
  /// committed and will be redelivered to the new owner), in milliseconds.
  size_t revoke_timeout_ms = 5000;

  /// Most records of one partition taken but not yet committable (behind an
  /// unfinished one); the partition pauses at this bound.
  size_t max_uncommitted = 65536;

  /// The topic results are produced to, keyed as their input record, in
  /// the runtime's output order; empty: no output topic. With one, a
  /// record finishes only when the broker acknowledged its output.
  std::string output_topic;

  /// The changelog topic of the keyed state (compacted; at least as many
  /// partitions as the input topics): every state write goes there first,
  /// to the partition of the input the key's records come from, and a
  /// member restores a partition's keys from it before the partition's
  /// events run. Empty: state stays in the member's own store. Needs
  /// `state.store` "rocksdb" (the local cache) or "memory".
  std::string changelog_topic;

  /// What the output topic gets for skipped, failed and parked events.
  tombstone_output tombstones = tombstone_output::mark;

  /// librdkafka producer properties of the output topic's producer, passed
  /// through (for example `acks`, `linger.ms`, `compression.type`). The
  /// source sets `enable.idempotence` and `bootstrap.servers` itself.
  std::map<std::string, std::string> output_properties;

  /// librdkafka consumer properties passed through as they are (for example
  /// `partition.assignment.strategy`, `session.timeout.ms`). The source sets
  /// `enable.auto.commit` and `enable.auto.offset.store` itself; they may
  /// not be given here.
  std::map<std::string, std::string> properties;

  /// Where the settings came from ("<defaults>" or a file path).
  std::string origin = "<defaults>";
};

} // namespace keylane::kafka
