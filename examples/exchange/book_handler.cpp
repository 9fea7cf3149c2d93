// SPDX-License-Identifier: Apache-2.0
#include "book_handler.hpp"

#include <caf/event_based_actor.hpp>

#include "price.hpp"
#include "risk.hpp"

namespace exchange {

void book_handler::on_activate(const keylane::key& k) {
  book_ = ctx_->shelf.take(k.to_string());
}

void book_handler::on_retire(const keylane::key&) {
  ctx_->shelf.put(std::move(book_));
}

void book_handler::on_event(order_request& rq,
                            keylane::completion<book_result> done) {
  bool ask = ctx_->risk && rq.kind != request_kind::cancel;
  if (!ask)
    return finish(rq, {}, done);
  // CAF copies both response handlers and either may finish the event. The
  // request stays where it is until the event completes, so they may refer
  // to it.
  auto pending = std::move(done).share();
  // A finite timeout costs a round trip through CAF's clock thread per
  // request; `risk_timeout` 0 leaves it to the actor (in-process: it
  // answers, or its exit fails the request).
  auto timeout = ctx_->risk_timeout.count() > 0 ? caf::duration{ctx_->risk_timeout}
                                                : caf::infinite;
  self()
    ->request(ctx_->risk, timeout, risk_check_atom::value,
              rq.account, static_cast<char>(rq.sd), rq.qty,
              to_ticks(rq.price))
    .then(
      [this, &rq, pending](std::string& verdict) {
        finish(rq, std::move(verdict), pending);
      },
      [this, &rq, pending](caf::error& err) {
        // An unanswered check must not stall the symbol or park it: the
        // order is refused and the client told why.
        finish(rq, "risk check unavailable: " + caf::to_string(err),
               pending);
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
  for (auto& t : trades)
    self()->send(ctx_->risk, risk_fill_atom::value, t.buy_account,
                 t.sell_account, t.qty, t.price_ticks);
  done.ok(std::move(res));
}

} // namespace exchange
