// SPDX-License-Identifier: Apache-2.0
#pragma once

// The keylane handler of the exchange: one instance per active symbol,
// holding the symbol's book; it asks the shared risk actor about each new
// order and replace and finishes the event from the answer, so a symbol
// waits for its own checks only.

#include <memory>
#include <string>
#include <vector>

#include <caf/actor.hpp>
#include <caf/timespan.hpp>

#include <keylane/handler.hpp>

#include "book_shelf.hpp"
#include "order_book.hpp"
#include "orders.hpp"

namespace exchange {

/// One request's outcome: its place in the symbol's sequence, the risk
/// verdict and the reports, in the symbol's report sequence.
struct book_result {
  uint64_t seq = 0;
  std::string risk;
  std::vector<exec_report> reports;
};

/// What every lane's handler shares.
struct book_context {
  caf::actor risk; ///< null: no risk check
  caf::timespan risk_timeout;
  book_shelf shelf;
};

/// A symbol's book as a keylane handler.
class book_handler : public keylane::handler<order_request, book_result> {
public:
  explicit book_handler(std::shared_ptr<book_context> ctx)
    : ctx_(std::move(ctx)) {}

  void on_activate(const keylane::key& k) override;
  void on_retire(const keylane::key& k) override;
  void on_event(order_request& rq,
                keylane::completion<book_result> done) override;

private:
  template <class Completion> // completion or shared_completion
  void finish(const order_request& rq, std::string risk, Completion& done);

  std::shared_ptr<book_context> ctx_;
  order_book book_;
};

} // namespace exchange
