// SPDX-License-Identifier: Apache-2.0
#pragma once

// The keylane handler of the exchange. A symbol's key holds the symbol's
// book: it asks the order's account key about each new order and replace,
// finishes the event from the answer (so a symbol waits for its own checks
// only), and tells each fill to the two account keys. An account's key
// keeps the account's position in keyed state and answers the checks.

#include <atomic>
#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include <caf/timespan.hpp>

#include <keylane/stateful_handler.hpp>

#include "account_key.hpp"
#include "book_shelf.hpp"
#include "order_book.hpp"
#include "orders.hpp"
#include "risk.hpp"

namespace exchange {

/// One request's outcome: its place in the symbol's sequence, the risk
/// verdict and the reports, in the symbol's report sequence. For an
/// account key's events, only `risk` (a check's verdict).
struct book_result {
  uint64_t seq = 0;
  std::string risk;
  std::vector<exec_report> reports;
};

/// What every lane's handler shares.
struct book_context {
  bool risk = false; ///< check new orders and replaces, keep positions
  risk_settings risk_cfg;
  caf::timespan risk_timeout;
  book_shelf shelf;
  /// Fills keylane refused to tell (`messages_full`): their positions
  /// were not moved. Counted for the report; 0 in every run so far.
  std::atomic<uint64_t> fills_refused{0};
};

/// A symbol's book, or an account's position, as a keylane handler.
class book_handler
  : public keylane::stateful_handler<order_request, book_result,
                                     account_position> {
public:
  explicit book_handler(std::shared_ptr<book_context> ctx)
    : ctx_(std::move(ctx)) {}

  void on_activate(const keylane::key& k) override;
  void on_retire(const keylane::key& k) override;
  void on_event(order_request& rq,
                keylane::completion<book_result> done) override;

private:
  void on_account(order_request& rq, keylane::completion<book_result> done);
  template <class Completion> // completion or shared_completion
  void answered(const order_request& rq, std::string risk, Completion& done);
  template <class Completion>
  void finish(const order_request& rq, std::string risk, Completion& done);

  std::shared_ptr<book_context> ctx_;
  bool account_ = false;
  order_book book_;
  std::minstd_rand rng_;
  std::uniform_int_distribution<uint32_t> delay_;
};

} // namespace exchange
