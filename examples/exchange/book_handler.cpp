// SPDX-License-Identifier: Apache-2.0
#include "book_handler.hpp"

#include <chrono>
#include <functional>

#include "price.hpp"

namespace exchange {

namespace {

bool internal(request_kind k) {
  return k == request_kind::risk_check || k == request_kind::fill;
}

order_request to_account(request_kind kind, const std::string& account,
                         side sd, int64_t qty, double price) {
  order_request m;
  m.kind = kind;
  m.account = account;
  m.sd = sd;
  m.qty = qty;
  m.price = price;
  return m;
}

} // namespace

void book_handler::on_activate(const keylane::key& k) {
  account_ = is_account_key(k);
  if (account_)
    return;
  book_ = ctx_->shelf.take(k.to_string());
  auto& r = ctx_->risk_cfg;
  rng_.seed(static_cast<uint32_t>(r.seed ^ std::hash<std::string>{}(k.str())));
  delay_ = std::uniform_int_distribution<uint32_t>{r.min_delay_us,
                                                   r.max_delay_us};
}

void book_handler::on_retire(const keylane::key&) {
  if (!account_)
    ctx_->shelf.put(std::move(book_));
}

void book_handler::on_event(order_request& rq,
                            keylane::completion<book_result> done) {
  if (account_)
    return on_account(rq, std::move(done));
  if (internal(rq.kind)) // not for a book: `validate` keeps clients' out
    return done.fail("a book got an account's request");
  if (!ctx_->risk || rq.kind == request_kind::cancel)
    return finish(rq, {}, done);
  // Either the answer or an error finishes the event, from this lane. The
  // request stays where it is until the event completes, so they may
  // refer to it.
  auto pending = std::move(done).share();
  auto timeout = ctx_->risk_timeout.count() > 0
                   ? ctx_->risk_timeout
                   : caf::timespan{std::chrono::minutes(1)};
  auto code = ask(account_key(rq.account),
                  to_account(request_kind::risk_check, rq.account, rq.sd,
                             rq.qty, rq.price),
                  timeout,
                  [this, &rq, pending](caf::expected<book_result> r) mutable {
                    // An unanswered check must not stall the symbol or
                    // park it: the order is refused and the client told why.
                    answered(rq,
                             r ? std::move(r->risk)
                               : "risk check unavailable: "
                                   + keylane::render(r.error()),
                             pending);
                  });
  if (code != keylane::errc::none)
    finish(rq,
           std::string{"risk check unavailable: "} + keylane::to_string(code),
           pending);
}

template <class Completion>
void book_handler::answered(const order_request& rq, std::string risk,
                            Completion& done) {
  // The check is modelled as a service across the data centre
  // (`--risk-us`): its answer reaches the book that much later, without
  // holding the thread meanwhile.
  auto us = delay_(rng_);
  if (us == 0)
    return finish(rq, std::move(risk), done);
  run_later(std::chrono::microseconds{us},
            [this, &rq, done, risk = std::move(risk)]() mutable {
              finish(rq, std::move(risk), done);
            });
}

template <class Completion>
void book_handler::finish(const order_request& rq, std::string risk,
                          Completion& done) {
  book_result res;
  std::vector<trade> trades;
  book_.apply(rq, to_ticks(rq.price), risk, res.reports,
              ctx_->risk ? &trades : nullptr);
  res.seq = book_.requests();
  res.risk = std::move(risk);
  // Each trade moves both accounts' positions; the fills leave when this
  // event ends, and an account applies them in the order its books sent.
  for (auto& t : trades) {
    auto px = to_price(t.price_ticks);
    auto e1 = tell(account_key(t.buy_account),
                   to_account(request_kind::fill, t.buy_account, side::buy,
                              t.qty, px));
    auto e2 = tell(account_key(t.sell_account),
                   to_account(request_kind::fill, t.sell_account, side::sell,
                              t.qty, px));
    if (e1 != keylane::errc::none || e2 != keylane::errc::none)
      ctx_->fills_refused.fetch_add(1, std::memory_order_relaxed);
  }
  done.ok(std::move(res));
}

void book_handler::on_account(order_request& rq,
                              keylane::completion<book_result> done) {
  auto& a = state();
  book_result res;
  auto ticks = to_ticks(rq.price);
  if (rq.kind == request_kind::fill) {
    a.position += rq.sd == side::buy ? rq.qty : -rq.qty;
    a.traded += static_cast<double>(rq.qty * ticks) / 100.0;
  } else if (rq.kind == request_kind::risk_check) {
    res.risk = risk_verdict(ctx_->risk_cfg, rq.account, a.position, a.traded,
                            static_cast<char>(rq.sd), rq.qty, ticks);
  } else {
    return done.fail("an account key got an order");
  }
  done.ok(std::move(res));
}

} // namespace exchange
