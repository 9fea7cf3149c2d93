// SPDX-License-Identifier: Apache-2.0
#pragma once

// The pre-trade risk check: one CAF actor shared by every book, holding
// each account's position and credit limits, answering each check after a
// simulated 50-200 us (a risk service across the data centre), without
// holding a thread meanwhile.

#include <cstdint>
#include <string>

#include <caf/actor.hpp>
#include <caf/actor_system.hpp>
#include <caf/atom.hpp>

namespace exchange {

/// `(risk_check_atom, account, side char, int64_t qty, int64_t price_ticks)`
/// -> `std::string`: empty when the order may go on, the reason otherwise.
using risk_check_atom = caf::atom_constant<caf::atom("risk_chk")>;

/// `(risk_fill_atom, buy account, sell account, int64_t qty, int64_t
/// price_ticks)`, no answer: a trade moved both accounts' positions.
using risk_fill_atom = caf::atom_constant<caf::atom("risk_fill")>;

/// The risk actor's limits and latency.
struct risk_settings {
  int64_t max_position = 1000000;       ///< |shares| per account
  double credit = 5e9;                  ///< traded notional per account
  double max_order_notional = 1e7;      ///< one order, qty x price
  uint32_t min_delay_us = 50;
  uint32_t max_delay_us = 200;
  uint64_t seed = 1;
};

/// The pre-trade check of an order of `account`, whose position and
/// traded notional are `position` and `traded` before it: empty when the
/// order may go on, the reason otherwise. The risk actor's and the
/// keylane matcher's account keys' rule.
[[nodiscard]] std::string risk_verdict(const risk_settings& cfg,
                                       const std::string& account,
                                       int64_t position, double traded,
                                       char sd, int64_t qty,
                                       int64_t price_ticks);

/// Spawns the risk actor in `sys`; it ends on an exit message.
[[nodiscard]] caf::actor spawn_risk(caf::actor_system& sys,
                                    const risk_settings& cfg);

} // namespace exchange
