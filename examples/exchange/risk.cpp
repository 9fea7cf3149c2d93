// SPDX-License-Identifier: Apache-2.0
#include "risk.hpp"

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <queue>
#include <random>
#include <unordered_map>
#include <vector>

#include <caf/event_based_actor.hpp>
#include <caf/response_promise.hpp>

namespace exchange {

namespace {

using risk_wake_atom = caf::atom_constant<caf::atom("risk_wake")>;
using risk_clock = std::chrono::steady_clock;

struct account_risk {
  int64_t position = 0; ///< shares bought minus shares sold
  double traded = 0;    ///< notional traded today
};

class risk_actor : public caf::event_based_actor {
public:
  risk_actor(caf::actor_config& cfg, risk_settings s)
    : caf::event_based_actor(cfg), cfg_(s), rng_(s.seed),
      delay_(s.min_delay_us, s.max_delay_us) {}

  const char* name() const override { return "exchange_risk"; }

  caf::behavior make_behavior() override {
    return {
      [this](risk_check_atom, const std::string& account, char sd,
             int64_t qty, int64_t price_ticks) {
        // The verdict is decided now, in the order checks arrive; only the
        // answer waits, as a remote service's would.
        auto due = risk_clock::now() + std::chrono::microseconds{delay_(rng_)};
        auto rp = make_response_promise();
        waiting_.push({due, rp, check(account, sd, qty, price_ticks)});
        arm();
        return rp; // answered in `wake`
      },
      [this](risk_wake_atom) {
        armed_ = false;
        // Answers due within the next few microseconds go out with this
        // wake-up: one timer for many answers under load, as a service
        // answering from one event loop would.
        auto now = risk_clock::now() + std::chrono::microseconds{5};
        while (!waiting_.empty() && waiting_.top().due <= now) {
          auto& w = const_cast<answer&>(waiting_.top());
          w.rp.deliver(std::move(w.verdict));
          waiting_.pop();
        }
        arm();
      },
      [this](risk_fill_atom, const std::string& buyer,
             const std::string& seller, int64_t qty, int64_t price_ticks) {
        double notional = static_cast<double>(qty * price_ticks) / 100.0;
        auto& b = accounts_[buyer];
        b.position += qty;
        b.traded += notional;
        auto& s = accounts_[seller];
        s.position -= qty;
        s.traded += notional;
      },
    };
  }

private:
  std::string check(const std::string& account, char sd, int64_t qty,
                    int64_t price_ticks) {
    auto& a = accounts_[account];
    return risk_verdict(cfg_, account, a.position, a.traded, sd, qty,
                        price_ticks);
  }

  struct answer {
    risk_clock::time_point due;
    caf::response_promise rp;
    std::string verdict;
    bool operator>(const answer& other) const { return due > other.due; }
  };

  // Keeps one timer armed for the earliest answer due.
  void arm() {
    if (waiting_.empty())
      return;
    auto due = waiting_.top().due;
    if (armed_ && armed_for_ <= due)
      return;
    armed_ = true;
    armed_for_ = due;
    auto delay = due - risk_clock::now();
    if (delay < risk_clock::duration::zero())
      delay = risk_clock::duration::zero();
    delayed_send(this, delay, risk_wake_atom::value);
  }

  risk_settings cfg_;
  std::minstd_rand rng_;
  std::uniform_int_distribution<uint32_t> delay_;
  std::priority_queue<answer, std::vector<answer>, std::greater<answer>>
    waiting_;
  bool armed_ = false;
  risk_clock::time_point armed_for_;
  std::unordered_map<std::string, account_risk> accounts_;
};

} // namespace

std::string risk_verdict(const risk_settings& cfg, const std::string& account,
                         int64_t position, double traded, char sd,
                         int64_t qty, int64_t price_ticks) {
  double notional = static_cast<double>(qty) * price_ticks / 100.0;
  if (notional > cfg.max_order_notional)
    return "risk: order notional " + std::to_string(notional)
           + " above the limit " + std::to_string(cfg.max_order_notional);
  auto after = position + (sd == '1' ? qty : -qty);
  if (std::llabs(after) > cfg.max_position)
    return "risk: position of " + account + " would be "
           + std::to_string(after) + ", limit "
           + std::to_string(cfg.max_position);
  if (traded + notional > cfg.credit)
    return "risk: credit of " + account + " exhausted";
  return {};
}

caf::actor spawn_risk(caf::actor_system& sys, const risk_settings& cfg) {
  return sys.spawn<risk_actor>(cfg);
}

} // namespace exchange
