// SPDX-License-Identifier: Apache-2.0
#pragma once

// Random order flows for the exchange's tests: new orders around a mid
// price that cross often, cancels and replaces of live orders (and now and
// then of unknown ones), over a few sessions and symbols.

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "orders.hpp"
#include "symbols.hpp"

namespace exchange::test {

/// `n` requests over `symbols` symbols and `sessions` sessions from `seed`.
inline std::vector<order_request> random_flow(uint64_t seed, size_t n,
                                              uint32_t symbols,
                                              int sessions = 4) {
  std::mt19937_64 rng{seed};
  auto pick = [&](uint64_t bound) {
    return std::uniform_int_distribution<uint64_t>{0, bound - 1}(rng);
  };
  std::vector<order_request> out;
  std::vector<std::vector<order_request>> live(symbols);
  uint64_t next_id = 0;
  for (size_t i = 0; i < n; ++i) {
    order_request rq;
    auto sym = static_cast<uint32_t>(pick(symbols));
    rq.symbol = symbol_table::name(sym);
    rq.session = static_cast<int>(pick(static_cast<uint64_t>(sessions)));
    rq.cl_ord_id = "C" + std::to_string(++next_id);
    auto roll = pick(100);
    auto& mine = live[sym];
    if (roll < 70 || mine.empty()) {
      rq.kind = request_kind::new_order;
      rq.account = "A" + std::to_string(rq.session) + "-" + std::to_string(pick(3));
      rq.sd = pick(2) ? side::buy : side::sell;
      // Buys around 100.00 and sells around 100.02: about a quarter cross.
      auto base = rq.sd == side::buy ? 10000 : 10002;
      rq.price = static_cast<double>(base + static_cast<int64_t>(pick(7)) - 3) / 100.0;
      rq.qty = static_cast<int64_t>(1 + pick(20));
      mine.push_back(rq);
    } else {
      auto& target = mine[pick(mine.size())];
      rq.kind = roll < 85 ? request_kind::cancel : request_kind::replace;
      rq.session = target.session;
      rq.account = target.account;
      rq.sd = target.sd;
      rq.orig_cl_ord_id = pick(20) == 0 ? "UNKNOWN" : target.cl_ord_id;
      rq.qty = static_cast<int64_t>(1 + pick(25));
      rq.price = target.price + static_cast<double>(static_cast<int64_t>(pick(3)) - 1) / 100.0;
      if (rq.kind == request_kind::replace && rq.orig_cl_ord_id == target.cl_ord_id) {
        target.cl_ord_id = rq.cl_ord_id;
        target.price = rq.price;
      }
    }
    out.push_back(rq);
  }
  return out;
}

} // namespace exchange::test
