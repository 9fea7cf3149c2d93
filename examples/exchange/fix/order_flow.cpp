// SPDX-License-Identifier: Apache-2.0
#include "order_flow.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace exchange {
namespace load {

namespace {
double uniform(std::mt19937_64& rng) {
  return std::uniform_real_distribution<double>(0.0, 1.0)(rng);
}
int64_t uniform_int(std::mt19937_64& rng, int64_t lo, int64_t hi) {
  return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
}
} // namespace

std::string price_text(double price) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f", price);
  return buf;
}

order_flow::order_flow(uint64_t seed, int symbols, int sessions, double hot_share)
  : rng_(seed), sessions_(sessions) {
  for (int i = 0; i < symbols; ++i) {
    char buf[16];
    std::snprintf(buf, sizeof buf, "S%04d", i);
    names_.push_back(buf);
    mid_ticks_.push_back(uniform_int(rng_, 1000, 20000));
  }
  by_rank_.resize(static_cast<size_t>(symbols));
  for (int i = 0; i < symbols; ++i)
    by_rank_[static_cast<size_t>(i)] = i;
  std::shuffle(by_rank_.begin(), by_rank_.end(), rng_);
  hot_ = by_rank_[0];
  // Rank 0 is the hot symbol; ranks 1.. share the rest as 1/rank.
  double rest = 0;
  for (int r = 1; r < symbols; ++r)
    rest += 1.0 / r;
  double acc = symbols > 1 ? hot_share : 1.0;
  cdf_.push_back(acc);
  for (int r = 1; r < symbols; ++r) {
    acc += (1.0 - hot_share) * (1.0 / r) / rest;
    cdf_.push_back(acc);
  }
  cdf_.back() = 1.0;
}

int order_flow::next_session() {
  return static_cast<int>(uniform_int(rng_, 1, sessions_));
}

action order_flow::next_action() {
  double u = uniform(rng_);
  return u < 0.70 ? action::new_order : u < 0.85 ? action::cancel : action::replace;
}

double order_flow::new_price(int symbol, char side) {
  int64_t mid = mid_ticks_[static_cast<size_t>(symbol)];
  bool buy = side == '1';
  int64_t ticks = uniform(rng_) < aggressive_share ? uniform_int(rng_, 0, 5)
                                                   : -uniform_int(rng_, 1, 20);
  int64_t px = buy ? mid + ticks : mid - ticks;
  return static_cast<double>(std::max<int64_t>(px, 1)) / 100.0;
}

int64_t order_flow::new_qty(int64_t cum_qty) {
  return cum_qty + uniform_int(rng_, 1, 10) * 10;
}

order_terms order_flow::new_order() {
  order_terms t;
  double u = uniform(rng_);
  size_t rank = static_cast<size_t>(std::lower_bound(cdf_.begin(), cdf_.end(), u) - cdf_.begin());
  t.symbol = by_rank_[std::min(rank, by_rank_.size() - 1)];
  t.side = uniform(rng_) < 0.5 ? '1' : '2';
  t.price = new_price(t.symbol, t.side);
  t.qty = new_qty(0);
  t.account = static_cast<int>(uniform_int(rng_, 0, 9));
  return t;
}

size_t order_flow::pick(size_t n) {
  return static_cast<size_t>(uniform_int(rng_, 0, static_cast<int64_t>(n) - 1));
}

} // namespace load
} // namespace exchange
