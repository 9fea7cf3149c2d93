// SPDX-License-Identifier: Apache-2.0
// The book handler with its account keys under keylane::testing: risk
// checks by ask, fills by tell, positions kept across retires, in one
// thread on the kit's clock.
#include <chrono>
#include <memory>

#include <catch2/catch.hpp>

#include <keylane/testing/kit.hpp>

#include "book_handler.hpp"

using namespace exchange;
using namespace std::chrono_literals;
using book_kit = keylane::testing::kit<order_request, book_result>;

namespace {

std::shared_ptr<book_context> limit_100() {
  auto ctx = std::make_shared<book_context>();
  ctx->risk = true;
  ctx->risk_cfg.max_position = 100;
  ctx->risk_cfg.min_delay_us = ctx->risk_cfg.max_delay_us = 0;
  ctx->risk_timeout = 50ms;
  return ctx;
}

keylane::handler_factory books(std::shared_ptr<book_context> ctx) {
  return [ctx](const keylane::handler_params&) {
    return std::make_unique<book_handler>(ctx);
  };
}

order_request order(const char* id, const char* account, const char* symbol,
                    side sd, int64_t qty) {
  order_request rq;
  rq.cl_ord_id = id;
  rq.account = account;
  rq.symbol = symbol;
  rq.sd = sd;
  rq.price = 10;
  rq.qty = qty;
  return rq;
}

// The order's verdict: "accepted", or the reject's reason.
std::string verdict(book_kit& kit, uint64_t id) {
  if (!kit.result(id) || kit.result(id)->reports.empty())
    return "no report";
  auto& reports = kit.result(id)->reports;
  return reports.front().kind == report_kind::rejected ? reports.front().text
                                                       : "accepted";
}

} // namespace

TEST_CASE("account keys keep the positions fills moved, across their "
          "retires, and answer the books' risk checks (kit)",
          "[exchange][kit][risk]") {
  keylane::settings cfg; // the matcher's: positions kept in memory
  cfg.state_store = keylane::state_backend::memory;
  book_kit kit{books(limit_100()), cfg};
  kit.submit("S0001", order("b1", "ann", "S0001", side::buy, 60));
  kit.submit("S0001", order("s1", "bob", "S0001", side::sell, 60));
  kit.advance(1s); // every lane lingers out and retires, the accounts' too
  CHECK_FALSE(kit.active(account_key("ann")));
  CHECK(kit.sent().size() == 4); // two checks, then one fill to each account
  auto b2 = kit.submit("S0002", order("b2", "ann", "S0002", side::buy, 50));
  auto s2 = kit.submit("S0003", order("s2", "ann", "S0003", side::sell, 150));
  auto b3 = kit.submit("S0004", order("b3", "bob", "S0004", side::buy, 150));
  auto b4 = kit.submit("S0005", order("b4", "bob", "S0005", side::sell, 50));
  kit.run_until_idle();
  CHECK_THAT(verdict(kit, b2), Catch::Contains("position of ann would be 110"));
  CHECK(verdict(kit, s2) == "accepted");
  CHECK(verdict(kit, b3) == "accepted");
  CHECK_THAT(verdict(kit, b4),
             Catch::Contains("position of bob would be -110"));
}

TEST_CASE("a risk check the account does not answer in time refuses the "
          "order, and one the test answers lets it rest (kit)",
          "[exchange][kit][risk]") {
  book_kit kit{books(limit_100())};
  kit.stub(account_key("ann"));
  auto late = kit.submit("S0001", order("b1", "ann", "S0001", side::buy, 10));
  kit.advance(50ms);
  CHECK_THAT(verdict(kit, late), Catch::Contains("risk check unavailable"));
  auto ok = kit.submit("S0001", order("b2", "ann", "S0001", side::buy, 10));
  kit.run_until_idle();
  REQUIRE(kit.sent().size() == 2);
  CHECK(kit.sent().back().payload.kind == request_kind::risk_check);
  CHECK(kit.answer(kit.sent().back().id, book_result{}));
  CHECK(verdict(kit, ok) == "accepted");
}
