// SPDX-License-Identifier: Apache-2.0
#include <catch2/catch.hpp>

#include <random>

#include "flow.hpp"
#include "order_book.hpp"
#include "price.hpp"
#include "reference.hpp"

using namespace exchange;

namespace {

order_request order(int session, std::string id, side sd, double px,
                    int64_t qty, std::string account = "A") {
  order_request rq;
  rq.kind = request_kind::new_order;
  rq.session = session;
  rq.cl_ord_id = std::move(id);
  rq.account = std::move(account);
  rq.symbol = "S0000";
  rq.sd = sd;
  rq.price = px;
  rq.qty = qty;
  return rq;
}

std::vector<exec_report> apply(order_book& b, const order_request& rq) {
  std::vector<exec_report> out;
  b.apply(rq, to_ticks(rq.price), {}, out);
  return out;
}

} // namespace

TEST_CASE("an incoming order fills against the best price first, at the "
          "resting order's price",
          "[exchange][book]") {
  order_book b{"S0000"};
  apply(b, order(1, "s1", side::sell, 100.02, 5));
  apply(b, order(1, "s2", side::sell, 100.01, 5));
  auto out = apply(b, order(2, "b1", side::buy, 100.05, 7));
  REQUIRE(out.size() == 5); // ack, then two fills with two reports each
  CHECK(out[0].kind == report_kind::new_ack);
  CHECK(out[1].cl_ord_id == "b1");
  CHECK(out[1].last_qty == 5);
  CHECK(out[1].last_px == Approx(100.01));
  CHECK(out[1].kind == report_kind::partial_fill);
  CHECK(out[2].cl_ord_id == "s2");
  CHECK(out[2].kind == report_kind::fill);
  CHECK(out[3].last_qty == 2);
  CHECK(out[3].last_px == Approx(100.02));
  CHECK(out[3].kind == report_kind::fill);
  CHECK(out[4].cl_ord_id == "s1");
  CHECK(out[4].kind == report_kind::partial_fill);
  CHECK(out[4].leaves_qty == 3);
  CHECK(b.resting() == 1);
  for (size_t i = 0; i < out.size(); ++i)
    CHECK(out[i].symbol_seq == 3 + i);
}

TEST_CASE("orders at one price fill in time order", "[exchange][book]") {
  order_book b{"S0000"};
  apply(b, order(1, "first", side::buy, 99.00, 4));
  apply(b, order(1, "second", side::buy, 99.00, 4));
  auto out = apply(b, order(2, "s", side::sell, 98.00, 6));
  REQUIRE(out.size() == 5);
  CHECK(out[2].cl_ord_id == "first");
  CHECK(out[2].last_qty == 4);
  CHECK(out[4].cl_ord_id == "second");
  CHECK(out[4].last_qty == 2);
  CHECK(out[4].last_px == Approx(99.00));
}

TEST_CASE("a replace that lowers the quantity keeps the order's place, and one "
          "that moves the price loses it",
          "[exchange][book]") {
  order_book b{"S0000"};
  apply(b, order(1, "a", side::buy, 99.00, 10));
  apply(b, order(1, "b", side::buy, 99.00, 10));
  auto lower = order(1, "a2", side::buy, 99.00, 5);
  lower.kind = request_kind::replace;
  lower.orig_cl_ord_id = "a";
  auto r = apply(b, lower);
  REQUIRE(r.size() == 1);
  CHECK(r[0].kind == report_kind::replaced);
  CHECK(r[0].leaves_qty == 5);
  auto hit = apply(b, order(2, "s", side::sell, 99.00, 5));
  REQUIRE(hit.size() == 3);
  CHECK(hit[2].cl_ord_id == "a2"); // still first

  auto move = order(1, "b2", side::buy, 99.01, 10);
  move.kind = request_kind::replace;
  move.orig_cl_ord_id = "b";
  apply(b, move);
  apply(b, order(1, "c", side::buy, 99.01, 10));
  auto again = order(1, "b3", side::buy, 99.00, 10);
  again.kind = request_kind::replace;
  again.orig_cl_ord_id = "b2"; // back to 99.00: now behind nobody, but later
  apply(b, again);
  auto sweep = apply(b, order(2, "s2", side::sell, 99.00, 11));
  REQUIRE(sweep.size() == 5);
  CHECK(sweep[2].cl_ord_id == "c");  // the better price first
  CHECK(sweep[4].cl_ord_id == "b3");
}

TEST_CASE("cancels and replaces of unknown orders get an OrderCancelReject",
          "[exchange][book]") {
  order_book b{"S0000"};
  auto c = order(1, "x", side::buy, 99.00, 1);
  c.kind = request_kind::cancel;
  c.orig_cl_ord_id = "nope";
  auto out = apply(b, c);
  REQUIRE(out.size() == 1);
  CHECK(out[0].kind == report_kind::cancel_reject);
  CHECK(out[0].reject_reason == 1);
  CHECK(out[0].order_id == "NONE");
  CHECK(out[0].cxl_rej_response_to == '1');
  CHECK_FALSE(out[0].text.empty());
  apply(b, order(1, "live", side::buy, 99.00, 1));
  auto dup = apply(b, order(1, "live", side::buy, 99.00, 1));
  REQUIRE(dup.size() == 1);
  CHECK(dup[0].kind == report_kind::rejected);
  CHECK(dup[0].reject_reason == 6);
}

TEST_CASE("the book and the reference matcher agree on random flows",
          "[exchange][book][property]") {
  auto seed = std::random_device{}();
  INFO("seed " << seed);
  for (int round = 0; round < 20; ++round) {
    auto flow = test::random_flow(seed + round, 3000, 3);
    std::map<std::string, order_book> books;
    std::map<std::string, reference_book> refs;
    uint64_t fills = 0;
    for (auto& rq : flow) {
      auto& b = books.try_emplace(rq.symbol, rq.symbol).first->second;
      auto& r = refs.try_emplace(rq.symbol, rq.symbol).first->second;
      std::string risk = (rq.qty == 13) ? "risk: test" : "";
      std::vector<exec_report> got;
      b.apply(rq, to_ticks(rq.price), risk, got);
      auto want = r.apply(rq, risk);
      REQUIRE(got.size() == want.size());
      for (size_t i = 0; i < got.size(); ++i) {
        CHECK(got[i].kind == want[i].kind);
        CHECK(got[i].cl_ord_id == want[i].cl_ord_id);
        CHECK(got[i].order_id == want[i].order_id);
        CHECK(got[i].last_qty == want[i].last_qty);
        CHECK(to_ticks(got[i].last_px + 0) == to_ticks(want[i].last_px + 0));
        CHECK(got[i].leaves_qty == want[i].leaves_qty);
        CHECK(got[i].cum_qty == want[i].cum_qty);
        if (got[i].kind == report_kind::fill)
          ++fills;
      }
    }
    CHECK(fills > 100); // the flow must trade for the check to mean much
  }
}
