// SPDX-License-Identifier: Apache-2.0
#pragma once

// The generated order flow: which session, which symbol, new / cancel /
// replace, and prices around each symbol's mid, all from one seed.

#include <cstdint>
#include <random>
#include <string>
#include <vector>

namespace exchange {
namespace load {

/// What to send next.
enum class action { new_order, cancel, replace };

/// A new order's terms.
struct order_terms {
  int symbol = 0;    ///< index into symbols()
  char side = '1';   ///< '1' buy, '2' sell
  double price = 0;  ///< on the 0.01 tick
  int64_t qty = 0;
  int account = 0;   ///< k of A<session>-<k>
};

/// A seeded generator. Symbol popularity: the hot symbol (a seeded choice)
/// takes `hot_share` of the orders, the others follow Zipf (s = 1) over a
/// seeded ranking. Each symbol has a mid in 10.00..200.00; most orders rest
/// 1..20 ticks behind it, and `aggressive_share` of them cross it by up to
/// 5 ticks, which makes both them and resting orders trade. Not
/// thread-safe: the sender owns it.
class order_flow {
public:
  /// Share of orders that cross the mid; tuned so 20-30 % of orders trade.
  static constexpr double aggressive_share = 0.15;

  order_flow(uint64_t seed, int symbols, int sessions, double hot_share);

  /// The session of the next order, 1..sessions, uniformly.
  int next_session();

  /// 70 % new, 15 % cancel, 15 % replace.
  action next_action();

  /// Terms of a new order.
  order_terms new_order();

  /// A new limit for an order on `symbol`, side `side`.
  double new_price(int symbol, char side);

  /// A new quantity above `cum_qty`, the part already executed.
  int64_t new_qty(int64_t cum_qty);

  /// A uniform index in [0, n).
  size_t pick(size_t n);

  /// "S0042".
  const std::string& symbol_name(int symbol) const { return names_[symbol]; }

  /// The symbol with the hot share.
  int hot_symbol() const noexcept { return hot_; }

private:
  std::mt19937_64 rng_;
  int sessions_;
  int hot_;
  std::vector<double> cdf_;    // by popularity rank
  std::vector<int> by_rank_;   // rank -> symbol
  std::vector<int64_t> mid_ticks_;
  std::vector<std::string> names_;
};

/// A price in ticks as FIX text, "123.45".
std::string price_text(double price);

} // namespace load
} // namespace exchange
