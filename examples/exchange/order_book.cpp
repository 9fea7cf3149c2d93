// SPDX-License-Identifier: Apache-2.0
#include "order_book.hpp"

#include <algorithm>

#include "price.hpp"
#include "validate.hpp"

namespace exchange {

std::string cl_ord_key(int session, const std::string& cl_ord_id) {
  std::string k = std::to_string(session);
  k += '/';
  k += cl_ord_id;
  return k;
}

void order_book::apply(const order_request& rq, int64_t price_ticks,
                       const std::string& risk_reject,
                       std::vector<exec_report>& out,
                       std::vector<trade>* trades) {
  ++requests_;
  switch (rq.kind) {
    case request_kind::new_order:
      if (!risk_reject.empty()) {
        auto r = reject(rq, 3, risk_reject);
        return stamp(r, out);
      }
      return add_new(rq, price_ticks, out, trades);
    case request_kind::cancel:
      return cancel(rq, out);
    case request_kind::replace:
      if (!risk_reject.empty()) {
        auto r = cancel_reject(rq, 99, risk_reject);
        return stamp(r, out);
      }
      return replace(rq, price_ticks, out, trades);
    case request_kind::risk_check:
    case request_kind::fill:
      return; // an account key's, never a book's
  }
}

void order_book::add_new(const order_request& rq, int64_t price,
                         std::vector<exec_report>& out,
                         std::vector<trade>* trades) {
  if (find(rq.session, rq.cl_ord_id)) {
    auto r = reject(rq, 6, "duplicate ClOrdID " + rq.cl_ord_id);
    return stamp(r, out);
  }
  resting_order o;
  o.number = ++next_order_;
  o.order_id = symbol_ + "-" + std::to_string(o.number);
  o.cl_ord_id = rq.cl_ord_id;
  o.account = rq.account;
  o.session = rq.session;
  o.sd = rq.sd;
  o.price = price;
  o.qty = rq.qty;
  auto ack = report(o, report_kind::new_ack);
  stamp(ack, out);
  match(o, out, trades);
  if (o.cum < o.qty)
    rest(o);
}

void order_book::cancel(const order_request& rq,
                        std::vector<exec_report>& out) {
  auto* o = find(rq.session, rq.orig_cl_ord_id);
  if (!o) {
    auto r = cancel_reject(rq, 1, "unknown order " + rq.orig_cl_ord_id);
    return stamp(r, out);
  }
  if (o->sd != rq.sd) {
    auto r = cancel_reject(rq, 99, "side does not match the order");
    return stamp(r, out);
  }
  auto r = report(*o, report_kind::canceled);
  r.cl_ord_id = rq.cl_ord_id;
  r.orig_cl_ord_id = rq.orig_cl_ord_id;
  r.leaves_qty = 0;
  stamp(r, out);
  unrest(*o);
  forget(*o);
}

void order_book::replace(const order_request& rq, int64_t price,
                         std::vector<exec_report>& out,
                         std::vector<trade>* trades) {
  auto* o = find(rq.session, rq.orig_cl_ord_id);
  if (!o) {
    auto r = cancel_reject(rq, 1, "unknown order " + rq.orig_cl_ord_id);
    return stamp(r, out);
  }
  if (o->sd != rq.sd) {
    auto r = cancel_reject(rq, 99, "side does not match the order");
    return stamp(r, out);
  }
  if (rq.cl_ord_id != rq.orig_cl_ord_id && find(rq.session, rq.cl_ord_id)) {
    auto r = cancel_reject(rq, 99, "duplicate ClOrdID " + rq.cl_ord_id);
    return stamp(r, out);
  }
  if (rq.qty <= o->cum) {
    auto r = cancel_reject(rq, 99, "quantity not above the filled quantity");
    return stamp(r, out);
  }
  // Only a smaller quantity at the same price keeps the order's place in
  // its level; anything else puts it at the back, as a new order would.
  bool keeps_priority = price == o->price && rq.qty <= o->qty;
  by_cl_ord_id_.erase(cl_ord_key(o->session, o->cl_ord_id));
  o->cl_ord_id = rq.cl_ord_id;
  by_cl_ord_id_[cl_ord_key(o->session, o->cl_ord_id)] = o->number;
  if (!keeps_priority)
    unrest(*o);
  o->price = price;
  o->qty = rq.qty;
  auto r = report(*o, report_kind::replaced);
  r.orig_cl_ord_id = rq.orig_cl_ord_id;
  stamp(r, out);
  if (keeps_priority)
    return;
  // The order left the book: match it as an aggressor, then rest the rest.
  auto moved = std::move(*o);
  orders_.erase(moved.number);
  by_cl_ord_id_.erase(cl_ord_key(moved.session, moved.cl_ord_id));
  match(moved, out, trades);
  if (moved.cum < moved.qty)
    rest(moved);
}

void order_book::match(resting_order& in, std::vector<exec_report>& out,
                       std::vector<trade>* trades) {
  auto cross = [&](auto& levels, auto crosses) {
    while (in.cum < in.qty && !levels.empty()) {
      auto best = levels.begin();
      if (!crosses(best->first))
        return;
      auto& queue = best->second;
      while (in.cum < in.qty && !queue.empty()) {
        auto& maker = orders_.at(queue.front());
        auto qty = std::min(in.qty - in.cum, maker.qty - maker.cum);
        auto px = maker.price;
        for (auto* o : {&in, &maker}) {
          o->cum += qty;
          o->notional += static_cast<double>(qty) * to_price(px);
        }
        auto kind_of = [](const resting_order& o) {
          return o.cum == o.qty ? report_kind::fill : report_kind::partial_fill;
        };
        auto a = report(in, kind_of(in));
        a.last_qty = qty;
        a.last_px = to_price(px);
        stamp(a, out);
        auto b = report(maker, kind_of(maker));
        b.last_qty = qty;
        b.last_px = to_price(px);
        stamp(b, out);
        if (trades) {
          bool in_buys = in.sd == side::buy;
          trades->push_back({in_buys ? in.account : maker.account,
                             in_buys ? maker.account : in.account, qty, px});
        }
        if (maker.cum == maker.qty) {
          queue.pop_front();
          by_cl_ord_id_.erase(cl_ord_key(maker.session, maker.cl_ord_id));
          orders_.erase(maker.number);
        }
      }
      if (queue.empty())
        levels.erase(best);
    }
  };
  if (in.sd == side::buy)
    cross(asks_, [&](int64_t ask) { return ask <= in.price; });
  else
    cross(bids_, [&](int64_t bid) { return bid >= in.price; });
}

void order_book::rest(resting_order& o) {
  auto number = o.number;
  auto& q = o.sd == side::buy ? bids_[o.price] : asks_[o.price];
  q.push_back(number);
  auto key = cl_ord_key(o.session, o.cl_ord_id);
  auto& placed = orders_[number];
  if (&placed != &o)
    placed = std::move(o);
  placed.at = std::prev(q.end());
  by_cl_ord_id_[std::move(key)] = number;
}

void order_book::unrest(resting_order& o) {
  auto drop = [&](auto& levels) {
    auto i = levels.find(o.price);
    i->second.erase(o.at);
    if (i->second.empty())
      levels.erase(i);
  };
  if (o.sd == side::buy)
    drop(bids_);
  else
    drop(asks_);
}

void order_book::forget(resting_order& o) {
  by_cl_ord_id_.erase(cl_ord_key(o.session, o.cl_ord_id));
  orders_.erase(o.number);
}

order_book::resting_order* order_book::find(int session,
                                            const std::string& cl_ord_id) {
  auto i = by_cl_ord_id_.find(cl_ord_key(session, cl_ord_id));
  if (i == by_cl_ord_id_.end())
    return nullptr;
  return &orders_.at(i->second);
}

exec_report order_book::report(const resting_order& o, report_kind kind) {
  exec_report r;
  r.session = o.session;
  r.kind = kind;
  r.order_id = o.order_id;
  r.cl_ord_id = o.cl_ord_id;
  r.account = o.account;
  r.symbol = symbol_;
  r.sd = o.sd;
  r.price = to_price(o.price);
  r.order_qty = o.qty;
  r.leaves_qty = o.qty - o.cum;
  r.cum_qty = o.cum;
  r.avg_px = o.cum > 0 ? o.notional / static_cast<double>(o.cum) : 0;
  return r;
}

exec_report order_book::reject(const order_request& rq, int reason,
                               std::string text) {
  return refusal(rq, reason, std::move(text));
}

exec_report order_book::cancel_reject(const order_request& rq, int reason,
                                      std::string text) {
  auto r = refusal(rq, reason, std::move(text)); // an OrderCancelReject
  if (auto* o = find(rq.session, rq.orig_cl_ord_id)) {
    r.order_id = o->order_id;
    r.leaves_qty = o->qty - o->cum;
    r.cum_qty = o->cum;
  }
  return r;
}

void order_book::stamp(exec_report& r, std::vector<exec_report>& out) {
  r.symbol_seq = ++reports_;
  r.exec_id = symbol_ + "-" + std::to_string(r.symbol_seq);
  out.push_back(std::move(r));
}

} // namespace exchange
