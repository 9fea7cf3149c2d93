// SPDX-License-Identifier: Apache-2.0
#pragma once

// What one way measured: order violations, rejected business events and
// when each account's last event finished.

#include <chrono>
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include "workload.hpp"

namespace keylane::cli {
class progress;
} // namespace keylane::cli

namespace ledger {

using clock = std::chrono::steady_clock;

/// The figures of one way, in seconds since it started submitting.
struct way_result {
  /// "shared_queue", "hash_partitions" or "key_lanes".
  std::string name;
  /// Events that finished (the workload's size, when all went well).
  uint64_t events = 0;
  /// Events applied after a later event of the same account.
  uint64_t violations = 0;
  /// Events the ledger rules rejected (see `apply`).
  uint64_t business_errors = 0;
  /// Median and latest completion time of the cold accounts.
  double cold_median_s = 0;
  double cold_last_s = 0;
  /// Completion time of the hot account.
  double hot_last_s = 0;
  /// Time until every event finished.
  double total_s = 0;
};

/// Collects the measurements of one way.
///
/// Thread-safety: `applied` and `finished` may be called from any threads
/// at once (one mutex; a few hundred calls per run do not contend);
/// `start` is called once before them, `result` after all of them.
class tally {
public:
  /// Measures a run of `w`; `shown`, if given, counts each finished event
  /// (the progress line on a terminal).
  explicit tally(const workload& w, keylane::cli::progress* shown = nullptr);

  /// Marks time zero: the moment the way starts submitting.
  void start() noexcept { t0_ = clock::now(); }

  /// Records that `ev` was applied to its account, `accepted` or rejected
  /// by the ledger rules, and counts an order violation if an event of the
  /// same account with a higher index was applied before.
  void applied(const ledger_event& ev, bool accepted);

  /// Records that an event of `account` finished now.
  void finished(uint32_t account);

  /// The figures, named `name`.
  [[nodiscard]] way_result result(std::string name) const;

private:
  struct account_record {
    int64_t highest_applied = -1;
    clock::duration last_finish{0};
  };
  clock::time_point t0_;
  keylane::cli::progress* shown_;
  mutable std::mutex mtx_;
  std::vector<account_record> accounts_;
  uint64_t events_ = 0;
  uint64_t violations_ = 0;
  uint64_t business_errors_ = 0;
};

} // namespace ledger
