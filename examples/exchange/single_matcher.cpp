// SPDX-License-Identifier: Apache-2.0
// The single matcher: one thread takes each request to the end (risk check
// included) before the next, for every symbol. The baseline keylane is
// measured against.

#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>
#include <unordered_map>

#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>
#include <caf/scoped_actor.hpp>
#include <caf/send.hpp>

#include "matcher.hpp"
#include "order_book.hpp"
#include "price.hpp"
#include "validate.hpp"

namespace exchange {

namespace {

// The scheduler keylane runs on by default: CAF's "stealing" one polls
// while idle, which would charge the baseline CPU time that is not its own.
caf::actor_system_config& sharing(caf::actor_system_config& cfg) {
  cfg.set("scheduler.policy", caf::atom("sharing"));
  return cfg;
}

class single_matcher final : public matcher {
public:
  single_matcher(const matcher_options& opts, report_out& out)
    : opts_(opts), symbols_(opts.symbols), out_(out),
      sys_(sharing(sys_cfg_)) {
    if (opts.risk)
      risk_ = spawn_risk(sys_, opts.risk_cfg);
    thread_ = std::thread{[this] { run(); }};
  }

  ~single_matcher() override { stop(); }

  void take(order_request&& rq) override {
    std::lock_guard<std::mutex> guard{mtx_};
    queue_.push_back(std::move(rq));
    ++taken_;
    cv_.notify_all();
  }

  bool drain(std::chrono::milliseconds timeout) override {
    std::unique_lock<std::mutex> guard{mtx_};
    return cv_.wait_for(guard, timeout, [&] { return done_ == taken_; });
  }

  void stop() override {
    {
      std::lock_guard<std::mutex> guard{mtx_};
      if (stopping_)
        return;
      stopping_ = true;
      cv_.notify_all();
    }
    thread_.join();
    if (risk_)
      caf::anon_send_exit(risk_, caf::exit_reason::user_shutdown);
  }

  book_counts books() const override { return {}; }

private:
  void run() {
    caf::scoped_actor self{sys_};
    std::vector<exec_report> reports;
    std::vector<trade> trades;
    for (;;) {
      order_request rq;
      {
        std::unique_lock<std::mutex> guard{mtx_};
        cv_.wait(guard, [&] { return stopping_ || !queue_.empty(); });
        if (stopping_)
          return;
        rq = std::move(queue_.front());
        queue_.pop_front();
      }
      process(self, rq, reports, trades);
      std::lock_guard<std::mutex> guard{mtx_};
      ++done_;
      cv_.notify_all();
    }
  }

  void process(caf::scoped_actor& self, const order_request& rq,
               std::vector<exec_report>& reports, std::vector<trade>& trades) {
    reports.clear();
    trades.clear();
    int64_t ticks = 0;
    if (auto bad = validate(rq, symbols_, ticks)) {
      reports.push_back(std::move(*bad));
      return out_.deliver(rq, 0, {}, reports);
    }
    std::string risk;
    if (risk_ && rq.kind != request_kind::cancel) {
      // The whole matcher waits for the answer: that is this design.
      self
        ->request(risk_,
                  opts_.risk_timeout.count() > 0
                    ? caf::duration{opts_.risk_timeout} : caf::infinite,
                  risk_check_atom::value,
                  rq.account, static_cast<char>(rq.sd), rq.qty, ticks)
        .receive([&](std::string& verdict) { risk = std::move(verdict); },
                 [&](caf::error& err) {
                   risk = "risk check unavailable: " + caf::to_string(err);
                 });
    }
    auto i = books_.find(rq.symbol);
    if (i == books_.end())
      i = books_.emplace(rq.symbol, order_book{rq.symbol}).first;
    auto& book = i->second;
    book.apply(rq, ticks, risk, reports, risk_ ? &trades : nullptr);
    for (auto& t : trades)
      caf::anon_send(risk_, risk_fill_atom::value, t.buy_account,
                     t.sell_account, t.qty, t.price_ticks);
    out_.deliver(rq, book.requests(), risk, reports);
  }

  matcher_options opts_;
  symbol_table symbols_;
  report_out& out_;
  caf::actor_system_config sys_cfg_;
  caf::actor_system sys_;
  caf::actor risk_;
  std::unordered_map<std::string, order_book> books_;
  std::mutex mtx_;
  std::condition_variable cv_;
  std::deque<order_request> queue_;
  uint64_t taken_ = 0;
  uint64_t done_ = 0;
  bool stopping_ = false;
  std::thread thread_;
};

} // namespace

std::unique_ptr<matcher> start_single_matcher(const matcher_options& opts,
                                              report_out& out) {
  return std::make_unique<single_matcher>(opts, out);
}

} // namespace exchange
