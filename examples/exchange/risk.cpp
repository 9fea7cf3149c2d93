#include "risk.hpp"

#include <chrono>
#include <cmath>
#include <random>
#include <unordered_map>

#include <caf/event_based_actor.hpp>
#include <caf/response_promise.hpp>

namespace exchange {

namespace {

using risk_reply_atom = caf::atom_constant<caf::atom("risk_rep")>;

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
        auto verdict = check(account, sd, qty, price_ticks);
        auto id = next_id_++;
        auto rp = make_response_promise();
        pending_.emplace(id, rp);
        // The verdict is decided now, in the order checks arrive; only the
        // answer waits, as a remote service's would.
        delayed_send(this, std::chrono::microseconds{delay_(rng_)},
                     risk_reply_atom::value, id, std::move(verdict));
        return rp;
      },
      [this](risk_reply_atom, uint64_t id, std::string& verdict) {
        auto i = pending_.find(id);
        if (i == pending_.end())
          return;
        i->second.deliver(std::move(verdict));
        pending_.erase(i);
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
    double notional = static_cast<double>(qty) * price_ticks / 100.0;
    if (notional > cfg_.max_order_notional)
      return "risk: order notional " + std::to_string(notional)
             + " above the limit " + std::to_string(cfg_.max_order_notional);
    auto& a = accounts_[account];
    auto after = a.position + (sd == '1' ? qty : -qty);
    if (std::llabs(after) > cfg_.max_position)
      return "risk: position of " + account + " would be "
             + std::to_string(after) + ", limit "
             + std::to_string(cfg_.max_position);
    if (a.traded + notional > cfg_.credit)
      return "risk: credit of " + account + " exhausted";
    return {};
  }

  risk_settings cfg_;
  std::minstd_rand rng_;
  std::uniform_int_distribution<uint32_t> delay_;
  uint64_t next_id_ = 0;
  std::unordered_map<uint64_t, caf::response_promise> pending_;
  std::unordered_map<std::string, account_risk> accounts_;
};

} // namespace

caf::actor spawn_risk(caf::actor_system& sys, const risk_settings& cfg) {
  return sys.spawn<risk_actor>(cfg);
}

} // namespace exchange
