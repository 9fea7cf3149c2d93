// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstdint>

namespace keylane::kafka {

/// A snapshot of a source's counters; each exact, not taken at one instant.
struct source_stats {
  /// Records read from Kafka.
  uint64_t consumed = 0;
  /// Records accepted by the runtime.
  uint64_t submitted = 0;
  /// Records finished (their output callback returned and, with an output
  /// topic, their output record was acknowledged; parked ones count
  /// only with a durable park store; with keyed state, once their state is
  /// durable too).
  uint64_t finished = 0;
  /// Finished records whose partition was given up meanwhile (their offset
  /// is not committed by this consumer; the new owner runs them again).
  uint64_t finished_late = 0;
  /// Submits refused by the runtime (full window or key backlog); each
  /// pauses its partition until the record is taken.
  uint64_t refused = 0;
  /// Times a partition was paused and resumed.
  uint64_t pauses = 0;
  uint64_t resumes = 0;
  /// Records read but not taken because their partition was revoked first.
  uint64_t dropped_on_revoke = 0;
  /// Offset commits the broker accepted, and those that failed.
  uint64_t commits = 0;
  uint64_t commit_failures = 0;
  /// Partition assignments and revocations seen.
  uint64_t assigned = 0;
  uint64_t revoked = 0;
  /// Revocations released with events still in flight (timeout).
  uint64_t revoke_timeouts = 0;
  /// Output records queued to `kafka.output_topic`, those the broker
  /// acknowledged, and those that were refused or failed for good (their
  /// input offsets stay uncommitted).
  uint64_t produced = 0;
  uint64_t delivered = 0;
  uint64_t output_failures = 0;
  /// With keyed state (`state.store` not "none"): records whose state
  /// change the runtime reported durable (a record finishes only then, and
  /// once its output was handled), and such reports that came after their
  /// partition was given up (dropped; the next owner's state skips them).
  uint64_t state_durable = 0;
  uint64_t state_durable_late = 0;
  /// With `kafka.changelog_topic`: partitions restored from the changelog
  /// (one per assignment), the records and bytes read doing it, and the
  /// time it took, summed over them (milliseconds).
  uint64_t restores = 0;
  uint64_t records_restored = 0;
  uint64_t restore_bytes = 0;
  uint64_t restore_ms = 0;
  /// Restores that failed (retried after a second; the partition waits).
  uint64_t restore_failures = 0;
  /// State records written to the changelog (acknowledged), their bytes,
  /// and writes not sent because their partition was no longer this
  /// member's (changes of events the next owner runs again).
  uint64_t changelog_records = 0;
  uint64_t changelog_bytes = 0;
  uint64_t changelog_dropped = 0;
  /// Records of the partitions assigned now whose output was handled and
  /// that wait only for their state to be durable (a gauge).
  uint64_t awaiting_state = 0;
  /// Records behind the end of the partitions assigned now, counted from
  /// each one's oldest record not finished (its next commit) to the end
  /// librdkafka last fetched (its high watermark): how far this consumer
  /// trails the producers (a gauge). A partition that has not handed a
  /// record to the runtime yet, or whose end is not known yet, adds 0.
  uint64_t lag = 0;
};

} // namespace keylane::kafka
