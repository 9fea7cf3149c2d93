// SPDX-License-Identifier: Apache-2.0
#include "reference.hpp"

#include <algorithm>
#include <cmath>
#include <map>

#include "price.hpp"

namespace exchange {

reference_book::live_order*
reference_book::find(int session, const std::string& cl_ord_id) {
  for (auto& o : live_)
    if (o.session == session && o.cl_ord_id == cl_ord_id)
      return &o;
  return nullptr;
}

exec_report reference_book::about(const live_order& o,
                                  report_kind kind) const {
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
  return r;
}

exec_report reference_book::refusal(const order_request& rq,
                                    report_kind kind, int reason) const {
  exec_report r;
  r.session = rq.session;
  r.kind = kind;
  r.order_id = "NONE";
  r.cl_ord_id = rq.cl_ord_id;
  r.orig_cl_ord_id = kind == report_kind::cancel_reject ? rq.orig_cl_ord_id
                                                        : std::string{};
  r.symbol = symbol_;
  r.sd = rq.sd;
  r.order_qty = rq.qty;
  r.reject_reason = reason;
  return r;
}

void reference_book::fill_against_book(live_order& in,
                                       std::vector<exec_report>& out) {
  while (in.cum < in.qty) {
    live_order* best = nullptr;
    for (auto& o : live_) {
      if (o.sd == in.sd || &o == &in)
        continue;
      bool crosses = in.sd == side::buy ? o.price <= in.price
                                        : o.price >= in.price;
      if (!crosses)
        continue;
      bool better = !best
                    || (in.sd == side::buy ? o.price < best->price
                                           : o.price > best->price)
                    || (o.price == best->price && o.time < best->time);
      if (better)
        best = &o;
    }
    if (!best)
      return;
    auto qty = std::min(in.qty - in.cum, best->qty - best->cum);
    in.cum += qty;
    best->cum += qty;
    for (auto* o : {&in, best}) {
      auto r = about(*o, o->cum == o->qty ? report_kind::fill
                                          : report_kind::partial_fill);
      r.last_qty = qty;
      r.last_px = to_price(best->price);
      out.push_back(r);
    }
    if (best->cum == best->qty)
      live_.erase(live_.begin() + (best - live_.data()));
  }
}

std::vector<exec_report> reference_book::apply(const order_request& rq,
                                               const std::string& risk) {
  std::vector<exec_report> out;
  auto ticks = to_ticks(rq.price);
  if (rq.kind == request_kind::new_order) {
    if (!risk.empty()) {
      out.push_back(refusal(rq, report_kind::rejected, 3));
      return out;
    }
    if (find(rq.session, rq.cl_ord_id)) {
      out.push_back(refusal(rq, report_kind::rejected, 6));
      return out;
    }
    live_order o;
    o.order_id = symbol_ + "-" + std::to_string(++orders_);
    o.cl_ord_id = rq.cl_ord_id;
    o.account = rq.account;
    o.session = rq.session;
    o.sd = rq.sd;
    o.price = ticks;
    o.qty = rq.qty;
    o.time = ++clock_;
    out.push_back(about(o, report_kind::new_ack));
    fill_against_book(o, out);
    if (o.cum < o.qty)
      live_.push_back(o);
    return out;
  }
  auto no = [&](int reason) {
    auto r = refusal(rq, report_kind::cancel_reject, reason);
    if (auto* o = find(rq.session, rq.orig_cl_ord_id)) {
      r.order_id = o->order_id;
      r.leaves_qty = o->qty - o->cum;
      r.cum_qty = o->cum;
    }
    r.cxl_rej_response_to = rq.kind == request_kind::replace ? '2' : '1';
    out.push_back(r);
    return out;
  };
  if (rq.kind == request_kind::replace && !risk.empty())
    return no(99);
  auto* o = find(rq.session, rq.orig_cl_ord_id);
  if (!o)
    return no(1);
  if (o->sd != rq.sd)
    return no(99);
  if (rq.kind == request_kind::cancel) {
    auto r = about(*o, report_kind::canceled);
    r.cl_ord_id = rq.cl_ord_id;
    r.orig_cl_ord_id = rq.orig_cl_ord_id;
    r.leaves_qty = 0;
    out.push_back(r);
    live_.erase(live_.begin() + (o - live_.data()));
    return out;
  }
  if (rq.cl_ord_id != rq.orig_cl_ord_id && find(rq.session, rq.cl_ord_id))
    return no(99);
  if (rq.qty <= o->cum)
    return no(99);
  bool keeps_time = ticks == o->price && rq.qty <= o->qty;
  o->cl_ord_id = rq.cl_ord_id;
  o->price = ticks;
  o->qty = rq.qty;
  auto r = about(*o, report_kind::replaced);
  r.orig_cl_ord_id = rq.orig_cl_ord_id;
  out.push_back(r);
  if (keeps_time)
    return out;
  live_order moved = *o;
  live_.erase(live_.begin() + (o - live_.data()));
  moved.time = ++clock_;
  fill_against_book(moved, out);
  if (moved.cum < moved.qty)
    live_.push_back(moved);
  return out;
}

namespace {

std::string describe(const exec_report& r) {
  char buf[256];
  std::snprintf(buf, sizeof buf,
                "kind %c session %d order %s cl %s orig %s last %lld@%.2f "
                "leaves %lld cum %lld reason %d",
                static_cast<char>(r.kind), r.session, r.order_id.c_str(),
                r.cl_ord_id.c_str(), r.orig_cl_ord_id.c_str(),
                static_cast<long long>(r.last_qty), r.last_px,
                static_cast<long long>(r.leaves_qty),
                static_cast<long long>(r.cum_qty), r.reject_reason);
  return buf;
}

bool same(const exec_report& a, const exec_report& b) {
  return a.kind == b.kind && a.session == b.session
         && a.order_id == b.order_id && a.cl_ord_id == b.cl_ord_id
         && a.orig_cl_ord_id == b.orig_cl_ord_id && a.sd == b.sd
         && a.order_qty == b.order_qty && a.last_qty == b.last_qty
         && to_ticks(a.last_px + 0.0) == to_ticks(b.last_px + 0.0)
         && a.leaves_qty == b.leaves_qty && a.cum_qty == b.cum_qty
         && a.reject_reason == b.reject_reason;
}

} // namespace

verify_result verify_journal(const journal_contents& j) {
  verify_result res;
  auto mismatch = [&](std::string what) {
    if (res.mismatches.size() < 10)
      res.mismatches.push_back(std::move(what));
    ++res.mismatch_count;
  };
  std::map<std::string, std::vector<const journal_order*>> orders;
  std::map<std::string, std::vector<const journal_report*>> reports;
  for (auto& o : j.orders)
    orders[o.request.symbol].push_back(&o);
  for (auto& r : j.reports)
    if (r.seq != 0) // rejected before any book: not in a symbol's sequence
      reports[r.report.symbol].push_back(&r);
  for (auto& [symbol, list] : orders) {
    ++res.symbols;
    std::sort(list.begin(), list.end(),
              [](auto* a, auto* b) { return a->seq < b->seq; });
    auto& got = reports[symbol];
    std::sort(got.begin(), got.end(), [](auto* a, auto* b) {
      return a->report.symbol_seq < b->report.symbol_seq;
    });
    reference_book book(symbol);
    size_t next = 0;
    for (size_t i = 0; i < list.size(); ++i) {
      auto* o = list[i];
      ++res.orders;
      if (o->seq != i + 1)
        mismatch(symbol + ": request " + std::to_string(i + 1)
                 + " of the sequence is missing (found seq "
                 + std::to_string(o->seq) + ")");
      for (auto& want : book.apply(o->request, o->risk)) {
        if (want.kind == report_kind::fill
            || want.kind == report_kind::partial_fill)
          ++res.fills;
        auto where = symbol + " report " + std::to_string(next + 1) + ": ";
        if (next >= got.size()) {
          mismatch(where + "missing; expected " + describe(want));
          continue;
        }
        auto& have = *got[next++];
        if (have.report.symbol_seq != next)
          mismatch(where + "symbol_seq is "
                   + std::to_string(have.report.symbol_seq));
        if (have.seq != o->seq)
          mismatch(where + "answers request " + std::to_string(have.seq)
                   + ", expected " + std::to_string(o->seq));
        if (!same(have.report, want))
          mismatch(where + "got " + describe(have.report) + "; expected "
                   + describe(want));
      }
    }
    for (; next < got.size(); ++next)
      mismatch(symbol + " report " + std::to_string(next + 1)
               + ": not expected: " + describe(got[next]->report));
    res.reports += got.size();
  }
  for (auto& [symbol, got] : reports)
    if (!orders.count(symbol))
      mismatch(symbol + ": " + std::to_string(got.size())
               + " reports but no requests");
  return res;
}

} // namespace exchange
