// SPDX-License-Identifier: Apache-2.0
#pragma once

// The checks a request passes before it reaches a book: what can be decided
// from the request alone (a known symbol, a positive quantity, a limit price
// on the tick, DAY). Whatever needs the book (an unknown order, a duplicate
// ClOrdID) the book decides.

#include <optional>
#include <string>

#include "orders.hpp"
#include "symbols.hpp"

namespace exchange {

/// A refusal of `rq` that no book saw: a rejected ExecutionReport for a
/// new order, an OrderCancelReject for a cancel or replace, with FIX reason
/// code `reason` and `text`.
[[nodiscard]] exec_report refusal(const order_request& rq, int reason,
                                  std::string text);

/// The reject `rq` deserves, or nothing when it may go to its book.
/// `price_ticks` is set to its price in ticks when it passes.
[[nodiscard]] std::optional<exec_report>
validate(const order_request& rq, const symbol_table& symbols,
         int64_t& price_ticks);

} // namespace exchange
