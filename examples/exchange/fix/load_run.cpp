// SPDX-License-Identifier: Apache-2.0
#include "load_run.hpp"

#include <chrono>
#include <thread>

#include <quickfix/FieldNumbers.h>

#include "fix_client.hpp"
#include "order_flow.hpp"
#include "slow_reader.hpp"

namespace exchange {
namespace load {

namespace {

void sleep_until_ns(int64_t t) {
  int64_t d = t - fix_client::now_ns();
  if (d > 0)
    std::this_thread::sleep_for(std::chrono::nanoseconds(d));
}

std::string account_of(int session, int k) {
  return "A" + std::to_string(session) + "-" + std::to_string(k);
}

} // namespace

run_result run_load(const load_options& o) {
  run_result res;
  // ClOrdIDs unique across runs against one long-lived server: "<run>-<session>-<n>".
  const std::string run = std::to_string(fix_client::now_ns() / 1000000 % 100000000);
  order_tracker tracker(run + "-");
  order_flow flow(o.seed, o.symbols, o.sessions, o.hot_share);
  res.hot_symbol = flow.symbol_name(flow.hot_symbol());

  fix_client client;
  if (!client.start(o.host, o.port, o.sessions,
                    [&tracker](const incoming& in) { tracker.on_message(in); },
                    res.error))
    return res;
  if (!client.wait_logged_on(10)) {
    res.error = "only " + std::to_string(client.logged_on()) + " of "
                + std::to_string(o.sessions) + " sessions logged on to " + o.host
                + ":" + std::to_string(o.port) + " within 10 s";
    return res;
  }
  const uint64_t logouts_before = client.logouts();
  // Beside the flow, a client that stops reading at once: the flow's
  // answers must not wait on it.
  slow_reader slow;
  if (o.slow_reader > 0
      && !slow.start(o.host, o.port, "LOAD" + std::to_string(o.sessions + 1),
                     o.slow_reader, res.error))
    return res;

  // Open loop: order i is due at start + i / rate whatever happened before;
  // a late sender sends at once and the lateness counts in the latency.
  const int64_t start = fix_client::now_ns() + 50 * 1000 * 1000;
  const double interval_ns = 1e9 / o.rate;
  const uint64_t total = static_cast<uint64_t>(o.duration_s * o.rate);
  std::vector<uint64_t> next_cl(static_cast<size_t>(o.sessions) + 1, 0);
  auto pick = [&flow](size_t n) { return flow.pick(n); };
  for (uint64_t i = 0; i < total; ++i) {
    const int64_t due = start + static_cast<int64_t>(static_cast<double>(i) * interval_ns);
    int s = flow.next_session();
    action a = flow.next_action();
    std::string cl = run + "-" + std::to_string(s) + "-" + std::to_string(++next_cl[s]);
    live_order lo;
    if (a != action::new_order && !tracker.take_live(s, pick, lo))
      a = action::new_order;
    field_list f;
    std::string type;
    if (a == action::new_order) {
      order_terms t = flow.new_order();
      const std::string& sym = flow.symbol_name(t.symbol);
      std::string acct = account_of(s, t.account);
      type = "D";
      f = {{FIX::FIELD::ClOrdID, cl}, {FIX::FIELD::Account, acct},
           {FIX::FIELD::Symbol, sym}, {FIX::FIELD::Side, std::string(1, t.side)},
           {FIX::FIELD::OrderQty, std::to_string(t.qty)},
           {FIX::FIELD::OrdType, "2"}, {FIX::FIELD::Price, price_text(t.price)},
           {FIX::FIELD::TimeInForce, "0"}};
      sleep_until_ns(due);
      tracker.new_sent(s, cl, sym, t.side, t.price, t.qty, acct, due);
    } else if (a == action::cancel) {
      type = "F";
      f = {{FIX::FIELD::OrigClOrdID, lo.cl_ord_id}, {FIX::FIELD::ClOrdID, cl},
           {FIX::FIELD::Symbol, lo.symbol}, {FIX::FIELD::Side, std::string(1, lo.side)},
           {FIX::FIELD::OrderQty, std::to_string(lo.qty)}};
      sleep_until_ns(due);
      tracker.change_sent(lo.chain, false, cl, due);
    } else {
      type = "G";
      int sym = std::atoi(lo.symbol.c_str() + 1);
      f = {{FIX::FIELD::OrigClOrdID, lo.cl_ord_id}, {FIX::FIELD::ClOrdID, cl},
           {FIX::FIELD::Account, lo.account}, {FIX::FIELD::Symbol, lo.symbol},
           {FIX::FIELD::Side, std::string(1, lo.side)},
           {FIX::FIELD::OrderQty, std::to_string(flow.new_qty(lo.cum_qty))},
           {FIX::FIELD::OrdType, "2"},
           {FIX::FIELD::Price, price_text(flow.new_price(sym, lo.side))},
           {FIX::FIELD::TimeInForce, "0"}};
      sleep_until_ns(due);
      tracker.change_sent(lo.chain, true, cl, due);
    }
    if (client.send(s, type, f) == 0)
      tracker.send_failed();
  }
  const int64_t sent_end = fix_client::now_ns();
  res.send_s = static_cast<double>(sent_end - start) / 1e9;

  const int64_t drain_end = sent_end + static_cast<int64_t>(o.drain_timeout_s * 1e9);
  while (tracker.outstanding() > 0 && fix_client::now_ns() < drain_end)
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  // Fills of resting orders keep coming after their last request is
  // answered; a short quiet spell lets those in flight land.
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  res.drain_s = static_cast<double>(fix_client::now_ns() - sent_end) / 1e9;
  res.session_errors = client.logouts() - logouts_before;
  res.malformed_reports = client.rejects_sent();
  res.slow_reader_sent = slow.sent();
  slow.close();
  client.stop();
  res.totals = tracker.totals();
  return res;
}

} // namespace load
} // namespace exchange
