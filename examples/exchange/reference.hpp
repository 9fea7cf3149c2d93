// SPDX-License-Identifier: Apache-2.0
#pragma once

// The reference matcher: plain single-threaded C++, no keylane, and on
// purpose none of order_book's structure (one vector per symbol, scanned
// for the best price and then the earliest time), so that a bug in the book
// or in how keylane feeds it cannot hide in shared code.

#include <cstdint>
#include <string>
#include <vector>

#include "journal.hpp"
#include "orders.hpp"

namespace exchange {

/// One symbol's book, the slow and obvious way.
class reference_book {
public:
  explicit reference_book(std::string symbol) : symbol_(std::move(symbol)) {}

  /// The reports `rq` must produce, `risk` being the risk actor's verdict
  /// (empty: passed).
  [[nodiscard]] std::vector<exec_report> apply(const order_request& rq,
                                               const std::string& risk);

private:
  struct live_order {
    std::string order_id, cl_ord_id, account;
    int session = -1;
    side sd = side::buy;
    int64_t price = 0, qty = 0, cum = 0;
    double notional = 0;
    uint64_t time = 0;
  };

  live_order* find(int session, const std::string& cl_ord_id);
  void fill_against_book(live_order& in, std::vector<exec_report>& out);
  exec_report about(const live_order& o, report_kind kind) const;
  exec_report refusal(const order_request& rq, report_kind kind,
                      int reason) const;

  std::string symbol_;
  uint64_t orders_ = 0;
  uint64_t clock_ = 0;
  std::vector<live_order> live_;
};

/// What `verify_journal` found.
struct verify_result {
  uint64_t symbols = 0;
  uint64_t orders = 0;
  uint64_t reports = 0;
  uint64_t fills = 0;
  std::vector<std::string> mismatches; ///< the first few, readable
  uint64_t mismatch_count = 0;
};

/// Replays each symbol's journaled requests in their sequence through a
/// `reference_book` and compares every report the journal holds for the
/// symbol, field by field, in the symbol's report sequence.
[[nodiscard]] verify_result verify_journal(const journal_contents& j);

} // namespace exchange
