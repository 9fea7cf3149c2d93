// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <tuple>
#include <utility>

namespace kafka_ledger {

/// What the consumers reported: every finished record, who finished it,
/// and whether each consumer saw each account's events in order.
/// Thread-safe: one reader thread per consumer calls `add`.
class tally {
public:
  /// Records "F partition offset account n assignment" from consumer `who`.
  void add(int who, const std::string& line);

  /// Distinct (account, n) finished.
  [[nodiscard]] size_t distinct() const;
  /// Finish lines in total (distinct plus redeliveries).
  [[nodiscard]] size_t lines() const;
  /// Lines per consumer.
  [[nodiscard]] std::map<int, size_t> per_consumer() const;
  /// Times a consumer saw an account's n not one above the previous within
  /// one assignment of its partition.
  [[nodiscard]] size_t order_violations() const;
  /// For a run that did not finish: each account with events missing of
  /// the `produced` it had, as "account (partition P, last offset O):
  /// missing #first..#last (count)", where P and O come from its last
  /// finished event (unknown when none finished).
  [[nodiscard]] std::string missing(const std::map<std::string, long>&
                                      produced) const;

private:
  mutable std::mutex mu_;
  std::set<std::pair<std::string, long>> done_;
  size_t lines_ = 0;
  std::map<int, size_t> per_;
  std::map<std::tuple<int, long, std::string>, long> last_;
  /// Each account's partition and offset of its highest finished n.
  std::map<std::string, std::pair<long, long>> where_;
  size_t violations_ = 0;
};

} // namespace kafka_ledger
