// SPDX-License-Identifier: Apache-2.0
#include "order_tracker.hpp"

#include <cstdio>

namespace exchange {
namespace load {

void order_tracker::note(uint64_t& counter, const char* what, const incoming& in) {
  ++counter;
  if (t_.examples.size() >= 5)
    return;
  char buf[256];
  std::snprintf(buf, sizeof buf, "%s: LOAD%d 35=%c 150=%c 39=%c 11=%s 55=%s 14=%lld 20001=%llu",
                what, in.session, in.msg_type, in.exec_type ? in.exec_type : '-',
                in.ord_status ? in.ord_status : '-', in.cl_ord_id.c_str(), in.symbol.c_str(),
                static_cast<long long>(in.cum_qty),
                static_cast<unsigned long long>(in.symbol_seq));
  t_.examples.push_back(buf);
}

void order_tracker::add_request(uint32_t chain, char kind, const std::string& cl,
                                int64_t sched_ns) {
  by_cl_[cl] = static_cast<uint32_t>(requests_.size());
  requests_.push_back(request{chain, kind, sched_ns});
  ++t_.sent;
}

void order_tracker::new_sent(int session, const std::string& cl,
                             const std::string& symbol, char side, double price,
                             int64_t qty, const std::string& account,
                             int64_t sched_ns) {
  std::lock_guard<std::mutex> lock(mutex_);
  chain c;
  c.session = session;
  c.symbol = symbol;
  c.account = account;
  c.side = side;
  c.qty = qty;
  c.price = price;
  c.cl_ord_id = cl;
  chains_.push_back(c);
  add_request(static_cast<uint32_t>(chains_.size() - 1), 'D', cl, sched_ns);
  ++t_.sent_new;
}

bool order_tracker::take_live(int session, const std::function<size_t(size_t)>& pick,
                              live_order& out) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (static_cast<size_t>(session) >= live_.size() || live_[session].empty())
    return false;
  uint32_t id = live_[session][pick(live_[session].size())];
  chain& c = chains_[id];
  out.chain = id;
  out.cl_ord_id = c.cl_ord_id;
  out.symbol = c.symbol;
  out.side = c.side;
  out.qty = c.qty;
  out.cum_qty = c.cum;
  out.price = c.price;
  out.account = c.account;
  c.pending = true;
  update_live(id);
  return true;
}

void order_tracker::change_sent(uint32_t chain, bool replace, const std::string& cl,
                                int64_t sched_ns) {
  std::lock_guard<std::mutex> lock(mutex_);
  add_request(chain, replace ? 'G' : 'F', cl, sched_ns);
  ++(replace ? t_.sent_replace : t_.sent_cancel);
}

void order_tracker::send_failed() {
  std::lock_guard<std::mutex> lock(mutex_);
  ++t_.send_failures;
}

// A chain can be cancelled or replaced while it rests and no request of ours
// is in flight for it.
void order_tracker::update_live(uint32_t id) {
  chain& c = chains_[id];
  bool want = c.acked && !c.terminal && !c.pending;
  if (want == (c.live_pos >= 0))
    return;
  if (live_.size() <= static_cast<size_t>(c.session))
    live_.resize(static_cast<size_t>(c.session) + 1);
  auto& v = live_[c.session];
  if (want) {
    c.live_pos = static_cast<int>(v.size());
    v.push_back(id);
  } else {
    uint32_t last = v.back();
    v[static_cast<size_t>(c.live_pos)] = last;
    chains_[last].live_pos = c.live_pos;
    v.pop_back();
    c.live_pos = -1;
  }
}

void order_tracker::on_message(const incoming& in) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (in.msg_type == '3') {
    ++t_.session_rejects;
    return;
  }
  if (in.msg_type == 'j') {
    ++t_.business_rejects;
    return;
  }
  if (in.msg_type != '8' && in.msg_type != '9')
    return;
  auto it = by_cl_.find(in.cl_ord_id);
  // An OrderCancelReject carries no Symbol (FIX 4.4): the order's chain
  // names it.
  const std::string& symbol =
    !in.symbol.empty() || it == by_cl_.end() ? in.symbol
                                             : chains_[requests_[it->second].chain].symbol;
  if (in.symbol_seq > 0 && !symbol.empty()) {
    if (last_seq_.size() <= static_cast<size_t>(in.session))
      last_seq_.resize(static_cast<size_t>(in.session) + 1);
    uint64_t& last = last_seq_[in.session][symbol];
    if (in.symbol_seq <= last)
      note(t_.seq_not_increasing,
           ("20001 not above " + std::to_string(last)).c_str(), in);
    last = in.symbol_seq;
  }
  if (it == by_cl_.end()) {
    if (in.cl_ord_id.compare(0, prefix_.size(), prefix_) != 0)
      ++t_.earlier_run_reports;
    else
      note(t_.unknown_order, "unknown ClOrdID", in);
    return;
  }
  request& rq = requests_[it->second];
  chain& ch = chains_[rq.chain];
  bool first = !rq.answered;
  if (first) {
    rq.answered = true;
    ++t_.answered;
    t_.latency.record(in.recv_ns - rq.sched_ns);
  }
  if (in.msg_type == '9') {
    ++t_.cancel_rejects;
    if (first && rq.kind == 'D')
      note(t_.wrong_first, "OrderCancelReject answers a new order", in);
    ch.pending = false;
    update_live(rq.chain);
    return;
  }
  if (first) {
    char e = in.exec_type;
    bool ok = rq.kind == 'D'   ? (e == '0' || e == '8')
              : rq.kind == 'F' ? e == '4'
                               : (e == '5' || e == '8');
    if (!ok)
      note(t_.wrong_first, "wrong first report", in);
  }
  on_exec_report(in, rq, ch);
  update_live(rq.chain);
}

void order_tracker::on_exec_report(const incoming& in, request& rq, chain& ch) {
  char e = in.exec_type;
  if (e == '8') {
    ++t_.rejects;
    // A rejected new order ends its chain; a rejected replace leaves the
    // order as it was.
    if (rq.kind == 'D')
      ch.terminal = true;
    else
      ch.pending = false;
    return;
  }
  if (ch.terminal) {
    note(t_.after_terminal, "after the order ended", in);
    return;
  }
  if (in.cum_qty < ch.cum)
    note(t_.cum_decreased, ("CumQty below " + std::to_string(ch.cum)).c_str(), in);
  else
    ch.cum = in.cum_qty;
  switch (e) {
    case '0':
      ch.acked = true;
      break;
    case 'F':
      ++t_.fills;
      if (!ch.traded) {
        ch.traded = true;
        ++t_.traded_orders;
      }
      if (in.ord_status == '2')
        ch.terminal = true;
      break;
    case '4':
      ch.terminal = true;
      ch.pending = false;
      break;
    case '5':
      ch.cl_ord_id = in.cl_ord_id;
      ch.qty = in.order_qty;
      ch.price = in.price;
      ch.pending = false;
      if (in.ord_status == '2')
        ch.terminal = true;
      break;
    default:
      note(t_.wrong_first, "unexpected ExecType", in);
      break;
  }
}

uint64_t order_tracker::outstanding() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return t_.sent - t_.answered;
}

tracker_totals order_tracker::totals() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return t_;
}

} // namespace load
} // namespace exchange
