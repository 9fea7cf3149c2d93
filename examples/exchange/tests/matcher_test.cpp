// SPDX-License-Identifier: Apache-2.0
#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <map>
#include <mutex>
#include <random>
#include <thread>

#include "flow.hpp"
#include "journal.hpp"
#include "matcher.hpp"
#include "reference.hpp"
#include "report_out.hpp"

using namespace exchange;

namespace {

// A journal file of its own per test, removed at the end.
struct temp_journal {
  std::filesystem::path path;
  temp_journal() {
    std::random_device rd;
    path = std::filesystem::temp_directory_path()
           / ("exchange-test-" + std::to_string(rd()) + ".jsonl");
  }
  ~temp_journal() {
    std::error_code ec;
    std::filesystem::remove(path, ec);
  }
};

// Every report sent, by session.
struct sent_reports {
  std::mutex mtx;
  std::vector<exec_report> all;
  void operator()(const exec_report& r) {
    std::lock_guard<std::mutex> guard{mtx};
    all.push_back(r);
  }
};

keylane::settings lanes(size_t cap) {
  keylane::settings s;
  s.order = keylane::order_mode::per_key;
  s.max_active_keys = cap;
  s.lane_linger_ms = 0;
  s.park = keylane::park_mode::none;
  s.threads = 2;
  return s;
}

matcher_options books(uint32_t symbols) {
  matcher_options o;
  o.symbols = symbols;
  o.risk_cfg.min_delay_us = 5;
  o.risk_cfg.max_delay_us = 40;
  return o;
}

// Feeds `flow` from two threads, each owning half of the sessions so that
// every session's requests keep their order.
void feed(matcher& m, const std::vector<order_request>& flow) {
  auto half = [&](int parity) {
    for (auto rq : flow)
      if (rq.session % 2 == parity)
        m.take(std::move(rq));
  };
  std::thread a{half, 0};
  std::thread b{half, 1};
  a.join();
  b.join();
}

verify_result replay(const temp_journal& j) {
  journal_contents c;
  std::string error;
  REQUIRE(read_journal(j.path.string(), c, error));
  return verify_journal(c);
}

} // namespace

TEST_CASE("keylane books with a cap far below the symbols produce the "
          "reference's executions and keep resting orders across retires",
          "[exchange][matcher][property]") {
  auto seed = std::random_device{}();
  INFO("seed " << seed);
  auto flow = test::random_flow(seed, 20000, 200);
  temp_journal tj;
  journal_writer journal;
  std::string error;
  REQUIRE(journal.open(tj.path.string(), error));
  sent_reports sent;
  report_out out{std::ref(sent), journal};
  auto m = start_keylane_matcher(lanes(4), books(200), out);
  REQUIRE(m);
  // Two halves with a drain between: a symbol's whole backlog may be queued
  // before its lane starts, so only the second half is sure to bring back
  // books that retired with resting orders.
  auto middle = flow.begin() + static_cast<long>(flow.size() / 2);
  feed(**m, {flow.begin(), middle});
  REQUIRE((*m)->drain(std::chrono::seconds(60)));
  feed(**m, {middle, flow.end()});
  REQUIRE((*m)->drain(std::chrono::seconds(60)));
  auto counts = (*m)->books();
  (*m)->stop();
  REQUIRE(journal.close());
  CHECK(out.counts().requests == flow.size());
  CHECK(out.counts().failures == 0);
  CHECK(counts.retires > 100);
  CHECK(counts.resting_kept > 100);
  CHECK(counts.restored > 0);
  auto res = replay(tj);
  for (auto& mm : res.mismatches)
    UNSCOPED_INFO(mm);
  CHECK(res.mismatch_count == 0);
  CHECK(res.orders == flow.size());
  CHECK(res.fills > 1000);
  // Each symbol's reports left in the symbol's sequence.
  std::map<std::string, uint64_t> last;
  for (auto& r : sent.all) {
    auto& l = last[r.symbol];
    CHECK(r.symbol_seq == l + 1);
    l = r.symbol_seq;
  }
}

TEST_CASE("the single matcher produces the reference's executions",
          "[exchange][matcher]") {
  auto seed = std::random_device{}();
  INFO("seed " << seed);
  auto flow = test::random_flow(seed, 3000, 20);
  temp_journal tj;
  journal_writer journal;
  std::string error;
  REQUIRE(journal.open(tj.path.string(), error));
  sent_reports sent;
  report_out out{std::ref(sent), journal};
  auto m = start_single_matcher(books(20), out);
  feed(*m, flow);
  REQUIRE(m->drain(std::chrono::seconds(60)));
  m->stop();
  REQUIRE(journal.close());
  CHECK(out.counts().requests == flow.size());
  auto res = replay(tj);
  for (auto& mm : res.mismatches)
    UNSCOPED_INFO(mm);
  CHECK(res.mismatch_count == 0);
  CHECK(res.orders == flow.size());
}

TEST_CASE("the verifier catches a journal whose fills were changed",
          "[exchange][verify]") {
  auto flow = test::random_flow(7, 2000, 5);
  temp_journal tj;
  journal_writer journal;
  std::string error;
  REQUIRE(journal.open(tj.path.string(), error));
  sent_reports sent;
  report_out out{std::ref(sent), journal};
  auto m = start_single_matcher(books(5), out);
  feed(*m, flow);
  REQUIRE(m->drain(std::chrono::seconds(60)));
  m->stop();
  REQUIRE(journal.close());
  journal_contents c;
  REQUIRE(read_journal(tj.path.string(), c, error));
  REQUIRE(verify_journal(c).mismatch_count == 0);
  SECTION("a fill quantity") {
    for (auto& r : c.reports)
      if (r.report.last_qty > 1) {
        r.report.last_qty -= 1;
        break;
      }
  }
  SECTION("two requests of a symbol swapped") {
    std::map<std::string, journal_order*> first;
    for (auto& o : c.orders) {
      auto& f = first[o.request.symbol];
      if (f && o.seq > f->seq + 5) {
        std::swap(f->seq, o.seq);
        break;
      }
      if (!f)
        f = &o;
    }
  }
  SECTION("a report dropped") {
    c.reports.erase(c.reports.begin() + static_cast<long>(c.reports.size() / 2));
  }
  CHECK(verify_journal(c).mismatch_count > 0);
}

TEST_CASE("bad requests get a reject with a reason and cost no book",
          "[exchange][bad_input]") {
  temp_journal tj;
  journal_writer journal;
  sent_reports sent;
  report_out out{std::ref(sent), journal};
  auto m = start_keylane_matcher(lanes(4), books(10), out);
  REQUIRE(m);
  auto good = [] {
    order_request rq;
    rq.session = 1;
    rq.cl_ord_id = "ok";
    rq.account = "A1-0";
    rq.symbol = "S0003";
    rq.price = 100.01;
    rq.qty = 10;
    return rq;
  };
  struct bad_case {
    const char* what;
    order_request rq;
    report_kind kind;
    int reason;
  };
  std::vector<bad_case> cases;
  auto add = [&](const char* what, auto change, report_kind k, int reason) {
    auto rq = good();
    rq.cl_ord_id = what;
    change(rq);
    cases.push_back({what, rq, k, reason});
  };
  add("unknown symbol", [](auto& r) { r.symbol = "S0010"; },
      report_kind::rejected, 1);
  add("unlisted name", [](auto& r) { r.symbol = "IBM"; },
      report_kind::rejected, 1);
  add("zero quantity", [](auto& r) { r.qty = 0; }, report_kind::rejected, 13);
  add("negative quantity", [](auto& r) { r.qty = -5; },
      report_kind::rejected, 13);
  add("off the tick", [](auto& r) { r.price = 100.005; },
      report_kind::rejected, 99);
  add("zero price", [](auto& r) { r.price = 0; }, report_kind::rejected, 99);
  add("market order", [](auto& r) { r.ord_type = '1'; },
      report_kind::rejected, 11);
  add("not DAY", [](auto& r) { r.time_in_force = '3'; },
      report_kind::rejected, 11);
  add("cancel of an unknown order",
      [](auto& r) {
        r.kind = request_kind::cancel;
        r.orig_cl_ord_id = "never-sent";
      },
      report_kind::cancel_reject, 1);
  add("replace of an unknown order",
      [](auto& r) {
        r.kind = request_kind::replace;
        r.orig_cl_ord_id = "never-sent";
      },
      report_kind::cancel_reject, 1);
  add("replace with a zero quantity",
      [](auto& r) {
        r.kind = request_kind::replace;
        r.orig_cl_ord_id = "x";
        r.qty = 0;
      },
      report_kind::cancel_reject, 99);
  add("an account key's check, sent by a client",
      [](auto& r) { r.kind = request_kind::risk_check; },
      report_kind::cancel_reject, 99);
  add("an account key's fill, sent by a client",
      [](auto& r) { r.kind = request_kind::fill; },
      report_kind::cancel_reject, 99);
  for (auto& c : cases)
    (*m)->take(order_request{c.rq});
  (*m)->take(good());
  REQUIRE((*m)->drain(std::chrono::seconds(10)));
  (*m)->stop();
  REQUIRE(sent.all.size() == cases.size() + 1);
  for (auto& c : cases) {
    INFO(c.what);
    auto i = std::find_if(sent.all.begin(), sent.all.end(),
                          [&](auto& r) { return r.cl_ord_id == c.what; });
    REQUIRE(i != sent.all.end());
    CHECK(i->kind == c.kind);
    CHECK(i->reject_reason == c.reason);
    CHECK(i->session == 1);
    CHECK_FALSE(i->text.empty());
    CHECK_FALSE(i->exec_id.empty()); // ExecID (17) is required on every report
  }
  auto ok = std::find_if(sent.all.begin(), sent.all.end(),
                         [](auto& r) { return r.cl_ord_id == "ok"; });
  REQUIRE(ok != sent.all.end());
  CHECK(ok->kind == report_kind::new_ack);
  // Only S0003 got a book: the bad symbols never became keys.
  CHECK(out.counts().early_rejects == 11);
}

namespace {

order_request order(std::string id, std::string account, std::string symbol,
                    side sd, int64_t qty) {
  order_request rq;
  rq.session = 1;
  rq.cl_ord_id = std::move(id);
  rq.account = std::move(account);
  rq.symbol = std::move(symbol);
  rq.sd = sd;
  rq.price = 10;
  rq.qty = qty;
  return rq;
}

// The verdicts a matcher gives three orders after a trade moved two
// accounts' positions, with a position limit of 100 shares.
std::map<std::string, std::string> verdicts_after_a_trade(bool on_keylane) {
  temp_journal tj;
  journal_writer journal;
  std::string error;
  REQUIRE(journal.open(tj.path.string(), error));
  sent_reports sent;
  report_out out{std::ref(sent), journal};
  auto opts = books(50);
  opts.risk_cfg.max_position = 100;
  opts.risk_cfg.min_delay_us = opts.risk_cfg.max_delay_us = 0;
  std::unique_ptr<matcher> m;
  if (on_keylane) {
    // One slot and no linger: every lane retires as soon as it is dry,
    // the account keys' too, and their positions must come back.
    auto started = start_keylane_matcher(lanes(1), opts, out);
    REQUIRE(started);
    m = std::move(*started);
  } else {
    m = start_single_matcher(opts, out);
  }
  m->take(order("b1", "ann", "S0001", side::buy, 60));
  m->take(order("s1", "bob", "S0001", side::sell, 60));
  REQUIRE(m->drain(std::chrono::seconds(10)));
  // Other symbols and accounts take the slot in between.
  for (int i = 0; i < 20; ++i)
    m->take(order("x" + std::to_string(i), "other" + std::to_string(i),
                  symbol_table::name(10 + i), side::buy, 1));
  REQUIRE(m->drain(std::chrono::seconds(10)));
  m->take(order("b2", "ann", "S0002", side::buy, 50));   // 60 + 50 > 100
  m->take(order("s2", "ann", "S0003", side::sell, 150)); // 60 - 150 = -90
  m->take(order("b3", "bob", "S0004", side::buy, 150));  // -60 + 150 = 90
  m->take(order("b4", "bob", "S0005", side::sell, 50));  // -60 - 50 < -100
  REQUIRE(m->drain(std::chrono::seconds(10)));
  auto counts = m->books();
  m->stop();
  CHECK(counts.fills_refused == 0);
  CHECK(out.counts().failures == 0);
  std::map<std::string, std::string> v;
  for (auto& r : sent.all)
    if (r.cl_ord_id == "b2" || r.cl_ord_id == "s2" || r.cl_ord_id == "b3"
        || r.cl_ord_id == "b4")
      v[r.cl_ord_id] = r.kind == report_kind::rejected ? r.text : "accepted";
  return v;
}

} // namespace

TEST_CASE("account keys keep the positions fills moved, across their "
          "retires, and check orders against them as the risk actor does",
          "[exchange][matcher][risk]") {
  auto lanes_say = verdicts_after_a_trade(true);
  auto actor_says = verdicts_after_a_trade(false);
  CHECK(lanes_say == actor_says);
  REQUIRE(lanes_say.size() == 4);
  CHECK_THAT(lanes_say["b2"], Catch::Contains("position of ann would be 110"));
  CHECK(lanes_say["s2"] == "accepted");
  CHECK(lanes_say["b3"] == "accepted");
  CHECK_THAT(lanes_say["b4"], Catch::Contains("position of bob would be -110"));
}
