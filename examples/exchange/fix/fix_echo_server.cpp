// Dev only (EXCLUDE_FROM_ALL): a stand-in for the exchange behind
// exchange_fix, with one toy price-time book per symbol under one lock, so
// order_entry_load can be tested (acks, fills, rejects, sequence) before the
// keylane matcher exists. Usage: fix_echo_server [--port P] [--symbols N]
// [--seconds S] [--cfg FILE] [--bad-seq N (every Nth report breaks tag
// 20001's order, to see the client catch it)]

#include <atomic>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <list>
#include <map>
#include <mutex>
#include <thread>
#include <unordered_map>

#include "fix_gateway.hpp"

using namespace exchange;

namespace {

std::atomic<bool> quit{false};
void on_signal(int) { quit = true; }

struct order {
  int session;
  std::string id, cl, account, symbol;
  side sd;
  double price;
  int64_t qty, cum = 0;
  double notional = 0;
};

struct book {
  uint64_t seq = 0;
  std::map<double, std::list<order*>, std::greater<double>> bids;
  std::map<double, std::list<order*>> asks;
};

class toy_exchange {
public:
  explicit toy_exchange(int symbols) : symbols_(symbols) {}
  ~toy_exchange() {
    for (auto& kv : by_cl_) delete kv.second;
  }
  fix_gateway* gw = nullptr;
  int bad_seq_every = 0;  // --bad-seq N: every Nth report repeats a symbol_seq

  void on(order_request&& r) {
    std::lock_guard<std::mutex> lock(m_);
    if (r.kind == request_kind::new_order) add(r);
    else cancel_or_replace(r);
  }

private:
  bool known(const std::string& s) const {
    return s.size() == 5 && s[0] == 'S' && std::atoi(s.c_str() + 1) < symbols_
           && std::strspn(s.c_str() + 1, "0123456789") == 4;
  }
  exec_report base(const order& o, report_kind k) {
    exec_report e;
    e.session = o.session; e.kind = k; e.order_id = o.id;
    e.exec_id = "E" + std::to_string(++exec_);
    e.cl_ord_id = o.cl; e.account = o.account; e.symbol = o.symbol; e.sd = o.sd;
    e.price = o.price; e.order_qty = o.qty; e.cum_qty = o.cum;
    e.leaves_qty = o.qty - o.cum; e.avg_px = o.cum ? o.notional / o.cum : 0;
    return e;
  }
  void emit(exec_report& e) {
    if (known(e.symbol)) e.symbol_seq = ++books_[e.symbol].seq;
    if (bad_seq_every > 0 && ++emitted_ % bad_seq_every == 0 && e.symbol_seq > 1)
      e.symbol_seq -= 1;
    gw->send(e);
  }
  void reject(const order_request& r, const char* why) {
    exec_report e;
    // No ExecID, as the matcher's early rejects: the gateway supplies one.
    e.session = r.session; e.kind = report_kind::rejected; e.order_id = "NONE";
    e.cl_ord_id = r.cl_ord_id;
    e.orig_cl_ord_id = r.orig_cl_ord_id;
    e.account = r.account; e.symbol = r.symbol; e.sd = r.sd; e.price = r.price;
    e.order_qty = r.qty; e.text = why; e.reject_reason = 99;
    emit(e);
  }
  const char* invalid(const order_request& r) const {
    if (!known(r.symbol)) return "unknown symbol";
    if (r.qty <= 0) return "quantity must be > 0";
    if (r.ord_type != '2') return "only limit orders";
    if (r.time_in_force != '0') return "only DAY";
    double t = r.price * 100;
    if (r.price <= 0 || std::fabs(t - std::round(t)) > 1e-6) return "price off the 0.01 tick";
    return nullptr;
  }
  void add(const order_request& r) {
    if (const char* why = invalid(r)) return reject(r, why);
    order* o = new order{r.session, "O" + std::to_string(++oid_), r.cl_ord_id,
                         r.account, r.symbol, r.sd, r.price, r.qty};
    by_cl_[key(r.session, r.cl_ord_id)] = o;
    exec_report e = base(*o, report_kind::new_ack);
    emit(e);
    match(o);
  }
  template <class Side> bool sweep(order* o, Side& opp, bool buy) {
    while (o->cum < o->qty && !opp.empty()) {
      auto it = opp.begin();
      if (buy ? it->first > o->price + 1e-9 : it->first < o->price - 1e-9) break;
      order* p = it->second.front();
      int64_t q = std::min(o->qty - o->cum, p->qty - p->cum);
      double px = p->price;
      for (order* x : {p, o}) {
        x->cum += q; x->notional += q * px;
        exec_report e = base(*x, x->cum == x->qty ? report_kind::fill : report_kind::partial_fill);
        e.last_qty = q; e.last_px = px;
        emit(e);
      }
      if (p->cum == p->qty) {
        it->second.pop_front();
        if (it->second.empty()) opp.erase(it);
        by_cl_.erase(key(p->session, p->cl)); delete p;
      }
    }
    return o->cum == o->qty;
  }
  void match(order* o) {
    book& b = books_[o->symbol];
    bool done = o->sd == side::buy ? sweep(o, b.asks, true) : sweep(o, b.bids, false);
    if (done) { by_cl_.erase(key(o->session, o->cl)); delete o; return; }
    if (o->sd == side::buy) b.bids[o->price].push_back(o);
    else b.asks[o->price].push_back(o);
  }
  void unlink(order* o) {
    book& b = books_[o->symbol];
    auto drop = [o](auto& s) {
      auto it = s.find(o->price);
      if (it == s.end()) return;
      it->second.remove(o);
      if (it->second.empty()) s.erase(it);
    };
    if (o->sd == side::buy) drop(b.bids); else drop(b.asks);
  }
  void cancel_or_replace(const order_request& r) {
    bool replace = r.kind == request_kind::replace;
    auto it = by_cl_.find(key(r.session, r.orig_cl_ord_id));
    if (it == by_cl_.end()) {
      exec_report e;
      e.session = r.session; e.kind = report_kind::cancel_reject; e.order_id = "NONE";
      e.cl_ord_id = r.cl_ord_id; e.orig_cl_ord_id = r.orig_cl_ord_id; e.symbol = r.symbol;
      e.reject_reason = 1; e.cxl_rej_response_to = replace ? '2' : '1';
      e.text = "unknown order";
      return emit(e);
    }
    order* o = it->second;
    if (replace) {
      if (const char* why = invalid(r)) return reject(r, why);
      if (r.qty <= o->cum) return reject(r, "quantity below executed");
    }
    unlink(o);
    by_cl_.erase(it);
    std::string orig = o->cl;
    o->cl = r.cl_ord_id;
    if (!replace) {
      exec_report e = base(*o, report_kind::canceled);
      e.orig_cl_ord_id = orig; e.leaves_qty = 0;
      emit(e); delete o; return;
    }
    o->price = r.price; o->qty = r.qty;
    by_cl_[key(o->session, o->cl)] = o;
    exec_report e = base(*o, report_kind::replaced);
    e.orig_cl_ord_id = orig;
    emit(e);
    match(o);
  }
  static std::string key(int s, const std::string& cl) { return std::to_string(s) + "|" + cl; }

  int symbols_;
  std::mutex m_;
  uint64_t exec_ = 0, oid_ = 0, emitted_ = 0;
  std::unordered_map<std::string, book> books_;
  std::unordered_map<std::string, order*> by_cl_;
};

} // namespace

int main(int argc, char** argv) {
  int port = 5001, symbols = 1000, seconds = 0, bad_seq = 0;
  std::string cfg = "examples/exchange/exchange.fix.cfg";
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string f = argv[i];
    if (f == "--port") port = std::atoi(argv[i + 1]);
    else if (f == "--symbols") symbols = std::atoi(argv[i + 1]);
    else if (f == "--seconds") seconds = std::atoi(argv[i + 1]);
    else if (f == "--cfg") cfg = argv[i + 1];
    else if (f == "--bad-seq") bad_seq = std::atoi(argv[i + 1]);
  }
  std::signal(SIGINT, on_signal);
  std::signal(SIGTERM, on_signal);
  toy_exchange ex(symbols);
  ex.bad_seq_every = bad_seq;
  std::string error;
  auto gw = fix_gateway::start(cfg, port,
                               [&](order_request&& r) { ex.on(std::move(r)); }, error);
  if (!gw) { std::fprintf(stderr, "fix_echo_server: %s\n", error.c_str()); return 1; }
  ex.gw = gw.get();
  std::fprintf(stderr, "fix_echo_server: listening on %d\n", port);
  auto end = std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
  while (!quit && (seconds == 0 || std::chrono::steady_clock::now() < end))
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  gw->stop();
  gateway_stats st = gw->stats();
  std::fprintf(stderr,
               "fix_echo_server: requests %llu reports %llu session_rejects %llu "
               "business_rejects %llu logons %llu logouts %llu unsent %llu\n",
               (unsigned long long)st.requests, (unsigned long long)st.reports,
               (unsigned long long)st.session_rejects, (unsigned long long)st.business_rejects,
               (unsigned long long)st.logons, (unsigned long long)st.logouts,
               (unsigned long long)st.unsent);
  return 0;
}
