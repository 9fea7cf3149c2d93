// SPDX-License-Identifier: Apache-2.0
#pragma once

// Failures injected into the retry scenario's handler: which event of which
// account fails, how (retryable or for good) and how often.

#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <string>

#include "workload.hpp"

namespace ledger {

/// One injected failure of one attempt.
struct fault {
  /// True for `fail_permanently`, false for a retryable `fail`.
  bool permanent = false;
  /// The failure's reason, as the handler reports it.
  std::string reason;
};

/// The faults to inject, at most one rule per account.
///
/// Thread-safety: every member may be called from any thread at once (one
/// mutex); lanes of different accounts strike concurrently while the
/// scenario clears a rule.
class fault_plan {
public:
  /// Event `index` of `account` fails retryably on its next `times`
  /// attempts, then succeeds.
  void fail_transiently(uint32_t account, uint32_t index, uint32_t times);

  /// Event `index` of `account` fails for good on every attempt until
  /// `clear(account)`.
  void fail_permanently(uint32_t account, uint32_t index);

  /// Removes the rule of `account` (the operator's fix).
  void clear(uint32_t account);

  /// Called once per handler attempt: the fault this attempt of `ev` meets,
  /// if any. Counts the attempt against a transient rule.
  [[nodiscard]] std::optional<fault> strike(const ledger_event& ev);

private:
  struct rule {
    uint32_t index = 0;
    bool permanent = false;
    // Attempts to fail in all, and still to fail (transient rules only).
    uint32_t times = 0;
    uint32_t left = 0;
  };
  std::mutex mtx_;
  std::map<uint32_t, rule> rules_;
};

} // namespace ledger
