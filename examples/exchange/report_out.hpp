// SPDX-License-Identifier: Apache-2.0
#pragma once

// Where the matchers' reports go: to the client's FIX session and, with
// `--journal`, into the journal with the request they answer.

#include <atomic>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <vector>

#include "journal.hpp"
#include "orders.hpp"

namespace exchange {

/// Counters of what went out.
struct report_counts {
  uint64_t requests = 0;      ///< requests answered
  uint64_t early_rejects = 0; ///< rejected before reaching a book
  uint64_t reports = 0;
  uint64_t fills = 0;         ///< fill reports (two per trade)
  uint64_t risk_rejects = 0;
  uint64_t failures = 0;      ///< requests a handler failed on
};

/// Sends and journals reports.
///
/// Thread-safety: `deliver` may be called from several threads (the
/// matcher's output thread and the FIX threads for early rejects); one
/// call's reports go out together and in their order.
class report_out {
public:
  using send_fn = std::function<void(const exec_report&)>;

  /// `journal` may be closed (not journaling); it must outlive this.
  report_out(send_fn send, journal_writer& journal)
    : send_(std::move(send)), journal_(journal) {}

  /// Sends `reports`, the answer to `rq`, request `seq` of its symbol's
  /// book (0: rejected before any book); `risk` is the risk verdict.
  void deliver(const order_request& rq, uint64_t seq, const std::string& risk,
               const std::vector<exec_report>& reports);

  /// Counts a request whose handler failed (its reject goes through
  /// `deliver` too).
  void note_failure();

  [[nodiscard]] report_counts counts() const;

private:
  send_fn send_;
  journal_writer& journal_;
  mutable std::mutex mtx_;
  report_counts counts_;
  uint64_t unbooked_reports_ = 0;
};

} // namespace exchange
