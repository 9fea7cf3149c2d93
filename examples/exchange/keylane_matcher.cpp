// SPDX-License-Identifier: Apache-2.0
// The books on keylane: the symbol is the key, one lane per active symbol,
// reports leave through the output callback in each symbol's order. Each
// account is a key too: it keeps its position, moved by the fills its
// books tell it, and answers their pre-trade checks.

#include <keylane/handler_registry.hpp>
#include <keylane/runtime.hpp>

#include "book_handler.hpp"
#include "matcher.hpp"
#include "validate.hpp"

namespace exchange {

namespace {

using book_runtime = keylane::runtime<order_request, book_result>;

class keylane_matcher final : public matcher {
public:
  keylane_matcher(const matcher_options& opts, report_out& out)
    : symbols_(opts.symbols), out_(out),
      ctx_(std::make_shared<book_context>()) {
    ctx_->risk = opts.risk;
    ctx_->risk_cfg = opts.risk_cfg;
    ctx_->risk_timeout = opts.risk_timeout;
  }

  ~keylane_matcher() override { stop(); }

  caf::error start(keylane::settings cfg, const matcher_options&) {
    // Positions outlive an account lane's retire in the state store (in
    // memory unless the config names one). Fills are plain tells: a book
    // is not keyed state, so nothing could be written atomically with it.
    if (cfg.state_store == keylane::state_backend::none)
      cfg.state_store = keylane::state_backend::memory;
    cfg.messaging_exactly_once = false;
    auto ctx = ctx_;
    keylane::handler_factory make = [ctx](const keylane::handler_params&) {
      return std::make_unique<book_handler>(ctx);
    };
    auto rt = book_runtime::start(
      std::move(cfg), std::move(make),
      [this](book_runtime::event_type& e) { output(e); });
    if (!rt)
      return std::move(rt.error());
    rt_ = std::move(*rt);
    return {};
  }

  void take(order_request&& rq) override {
    int64_t ticks = 0;
    if (auto bad = validate(rq, symbols_, ticks))
      return out_.deliver(rq, 0, {}, {std::move(*bad)});
    auto symbol = rq.symbol;
    auto res = rt_->submit(symbol, std::move(rq));
    if (!res) // the request was left untouched
      out_.deliver(rq, 0, {},
                   {refusal(rq, 99, std::string{"exchange busy: "}
                                 + keylane::to_string(res.code()))});
  }

  bool drain(std::chrono::milliseconds timeout) override {
    return rt_ && rt_->drain(timeout);
  }

  void stop() override {
    if (!rt_)
      return;
    rt_->stop();
    rt_.reset();
  }

  book_counts books() const override {
    book_counts c;
    c.retires = ctx_->shelf.retires();
    c.resting_kept = ctx_->shelf.resting_kept();
    c.restored = ctx_->shelf.restored();
    c.fills_refused = ctx_->fills_refused.load(std::memory_order_relaxed);
    if (rt_)
      c.active_lanes = rt_->stats().active_lanes;
    return c;
  }

private:
  void output(book_runtime::event_type& e) {
    if (e.payload.kind == request_kind::risk_check
        || e.payload.kind == request_kind::fill) {
      // An account key's event: nothing for a client. One that failed
      // left a position unmoved or a check unanswered (its book refused
      // the order), and is counted.
      if (e.status != keylane::outcome::ok)
        out_.note_failure();
      return;
    }
    if (e.status == keylane::outcome::ok && e.result) {
      out_.deliver(e.payload, e.result->seq, e.result->risk,
                   e.result->reports);
      return;
    }
    // A handler that failed, threw or timed out: the client still gets an
    // answer, and the book did not change (it changes only in `finish`).
    out_.note_failure();
    out_.deliver(e.payload, 0, {},
                 {refusal(e.payload, 99, "internal error: "
                                      + std::string{keylane::to_string(e.status)}
                                      + " " + e.error)});
  }

  symbol_table symbols_;
  report_out& out_;
  std::shared_ptr<book_context> ctx_;
  std::unique_ptr<book_runtime> rt_;
};

} // namespace

caf::expected<std::unique_ptr<matcher>>
start_keylane_matcher(keylane::settings cfg, const matcher_options& opts,
                      report_out& out) {
  auto m = std::make_unique<keylane_matcher>(opts, out);
  if (auto err = m->start(std::move(cfg), opts))
    return err;
  return std::unique_ptr<matcher>{std::move(m)};
}

} // namespace exchange
