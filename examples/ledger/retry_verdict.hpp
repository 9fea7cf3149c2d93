// SPDX-License-Identifier: Apache-2.0
#pragma once

// Judging the retry scenario: what it was expected to do, what it did, and
// every difference, in words.

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "retry_scenario.hpp"

namespace ledger {

/// The scenario's figures and whether each expectation held.
struct retry_verdict {
  /// Events submitted in the first pass.
  uint64_t events = 0;
  /// `ok` outputs over both passes.
  uint64_t ok = 0;
  /// `parked` tombstones of the first pass.
  uint64_t parked_tombstones = 0;
  /// Parked events per key after the first pass, as `parked_keys()` said.
  std::vector<std::pair<std::string, uint64_t>> parked;
  /// Retries (attempts beyond the first) per account, from the outputs of
  /// both passes; only accounts with retries.
  std::map<uint32_t, uint64_t> retried;
  /// What `replay()` returned.
  uint64_t replayed = 0;
  /// Every account's outputs came in submission order, each event once, in
  /// each pass, and every applied event saw the balance its predecessors
  /// left (so the handler applied them in order too).
  bool order_kept = true;
  /// Every account without an injected fault: all events ok, first attempt.
  bool other_accounts_ok = true;
  /// `parked_events()` of the failing account is exactly its submitted
  /// events, in order.
  bool parked_list_matches = true;
  /// The replay ran exactly the parked events, ok and in order, and
  /// nothing else.
  bool replayed_in_order = true;
  /// The park store was empty after the replay.
  bool store_empty_after_replay = true;
  /// Each difference from the expectation, one sentence each.
  std::vector<std::string> problems;

  /// True when everything went as expected.
  [[nodiscard]] bool as_expected() const noexcept { return problems.empty(); }
};

/// Compares `obs` with what `spec` leads one to expect.
[[nodiscard]] retry_verdict judge(const retry_spec& spec,
                                  const retry_observed& obs);

} // namespace ledger
