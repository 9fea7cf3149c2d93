// SPDX-License-Identifier: Apache-2.0
#include "validate.hpp"

#include "price.hpp"

namespace exchange {

exec_report refusal(const order_request& rq, int reason, std::string text) {
  exec_report r;
  r.session = rq.session;
  r.order_id = "NONE";
  r.cl_ord_id = rq.cl_ord_id;
  r.orig_cl_ord_id = rq.orig_cl_ord_id;
  r.account = rq.account;
  r.symbol = rq.symbol;
  r.sd = rq.sd;
  r.price = rq.price;
  r.order_qty = rq.qty;
  r.reject_reason = reason;
  r.text = std::move(text);
  if (rq.kind == request_kind::new_order) {
    r.kind = report_kind::rejected;
  } else {
    r.kind = report_kind::cancel_reject;
    r.cxl_rej_response_to = rq.kind == request_kind::replace ? '2' : '1';
  }
  return r;
}

std::optional<exec_report> validate(const order_request& rq,
                                    const symbol_table& symbols,
                                    int64_t& price_ticks) {
  // FIX reason codes: OrdRejReason (103) for new orders, CxlRejReason (102)
  // for cancels and replaces; 99 is "other" in both.
  bool is_new = rq.kind == request_kind::new_order;
  int unknown_symbol = is_new ? 1 : 99;
  int bad_order = 99;
  if (rq.kind != request_kind::new_order && rq.kind != request_kind::cancel
      && rq.kind != request_kind::replace)
    return refusal(rq, bad_order, "not a new order, cancel or replace");
  if (rq.cl_ord_id.empty())
    return refusal(rq, bad_order, "ClOrdID is empty");
  if (!symbols.listed(rq.symbol))
    return refusal(rq, unknown_symbol, "unknown symbol '" + rq.symbol + "'");
  if (rq.sd != side::buy && rq.sd != side::sell)
    return refusal(rq, bad_order, "Side must be 1 (buy) or 2 (sell)");
  if (rq.kind == request_kind::cancel) {
    if (rq.orig_cl_ord_id.empty())
      return refusal(rq, 1, "OrigClOrdID is empty");
    price_ticks = 0;
    return std::nullopt;
  }
  if (rq.kind == request_kind::replace && rq.orig_cl_ord_id.empty())
    return refusal(rq, 1, "OrigClOrdID is empty");
  if (rq.ord_type != '2')
    return refusal(rq, is_new ? 11 : 99,
                  "only limit orders (OrdType=2) are accepted");
  if (rq.time_in_force != '0')
    return refusal(rq, is_new ? 11 : 99,
                  "only DAY orders (TimeInForce=0) are accepted");
  if (rq.qty <= 0)
    return refusal(rq, is_new ? 13 : 99,
                  "OrderQty must be positive, not " + std::to_string(rq.qty));
  if (rq.qty > 1000000000)
    return refusal(rq, is_new ? 13 : 99, "OrderQty above 1000000000");
  price_ticks = to_ticks(rq.price);
  if (price_ticks < 0)
    return refusal(rq, 99,
                  "Price " + std::to_string(rq.price)
                    + " is not a positive multiple of the tick 0.01");
  return std::nullopt;
}

} // namespace exchange
