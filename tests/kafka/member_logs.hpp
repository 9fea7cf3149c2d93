// SPDX-License-Identifier: Apache-2.0
#pragma once

// Reads the members' logs and checks the source's guarantees on them:
// complete accounting, per-key order, commit safety, and redelivery of
// uncommitted records only.

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace kafka_test {

/// A finished record ("F" line).
struct finish_line {
  int partition;
  int64_t offset;
  std::string key;
  std::string value;
  uint64_t assignment;
  int64_t at_ns;
  std::string status;
  std::string member; // the log file
};

/// A commit the broker accepted ("C" line).
struct commit_line {
  int partition;
  int64_t offset;
  int64_t at_ns;
  std::string member;
};

/// Everything the members logged.
struct member_logs {
  std::vector<finish_line> finished; // per member in its output order
  std::vector<commit_line> commits;
  std::set<std::string> stopped; // members that logged "S"
  /// Sums of the "S" lines: submits the runtime refused (each paused a
  /// partition) and revocations that timed out with events in flight.
  uint64_t refused = 0;
  uint64_t revoke_timeouts = 0;

  /// Reads the logs `files` (missing files count as empty).
  static member_logs read(const std::vector<std::string>& files);

  /// Distinct values finished with status ok.
  [[nodiscard]] std::set<std::string> values() const;

  /// The highest accepted commit of each partition, summed: the number of
  /// records committed when offsets start at 0 without gaps.
  [[nodiscard]] int64_t committed_total() const;

  /// Records finished more than once.
  [[nodiscard]] size_t redelivered() const;

  /// Problems, one line each (empty: all good): a produced value never
  /// finished; a key whose values ("k:n") do not rise by one within one
  /// assignment of one member; a commit at an offset below which some
  /// record had not finished yet; a record run again after a commit past
  /// it.
  [[nodiscard]] std::vector<std::string>
  problems(const std::set<std::string>& produced) const;
};

} // namespace kafka_test
