// SPDX-License-Identifier: Apache-2.0
#pragma once

// One symbol's limit order book: price-time priority, partial fills, fills
// at the resting order's price.

#include <cstdint>
#include <list>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

#include "orders.hpp"

namespace exchange {

/// A fill between an aggressor and a resting order, for the risk actor.
struct trade {
  std::string buy_account;
  std::string sell_account;
  int64_t qty = 0;
  int64_t price_ticks = 0;
};

/// The book of one symbol and the counters that number its reports.
///
/// Thread-safety: none; one lane (or the single matcher's thread) owns it.
/// Moving it keeps every resting order and its priority, which is what a
/// retire and a later activation do.
class order_book {
public:
  order_book() = default;
  explicit order_book(std::string symbol) : symbol_(std::move(symbol)) {}

  /// Applies `rq`, already validated (`price_ticks` > 0 for new and
  /// replace), appending its reports to `out` in the symbol's sequence, and
  /// the trades it made to `trades`. `risk_reject`, if not empty, rejects
  /// a new order or replace with that text instead.
  void apply(const order_request& rq, int64_t price_ticks,
             const std::string& risk_reject, std::vector<exec_report>& out,
             std::vector<trade>* trades = nullptr);

  /// Orders resting now.
  [[nodiscard]] size_t resting() const noexcept { return orders_.size(); }

  /// Requests applied so far; the next one gets number `requests() + 1`.
  [[nodiscard]] uint64_t requests() const noexcept { return requests_; }

  [[nodiscard]] const std::string& symbol() const noexcept { return symbol_; }

private:
  struct resting_order;
  using level = std::list<uint64_t>;

  struct resting_order {
    uint64_t number = 0; ///< order number within the symbol
    std::string order_id;
    std::string cl_ord_id;
    std::string account;
    int session = -1;
    side sd = side::buy;
    int64_t price = 0; ///< ticks
    int64_t qty = 0;   ///< order quantity
    int64_t cum = 0;
    double notional = 0; ///< sum of fill qty x price, for AvgPx
    level::iterator at;  ///< its place in its price level
  };

  void add_new(const order_request& rq, int64_t price,
               std::vector<exec_report>& out, std::vector<trade>* trades);
  void cancel(const order_request& rq, std::vector<exec_report>& out);
  void replace(const order_request& rq, int64_t price,
               std::vector<exec_report>& out, std::vector<trade>* trades);
  void match(resting_order& in, std::vector<exec_report>& out,
             std::vector<trade>* trades);
  void rest(resting_order& o);
  void unrest(resting_order& o);
  void forget(resting_order& o);
  resting_order* find(int session, const std::string& cl_ord_id);
  exec_report report(const resting_order& o, report_kind kind);
  exec_report reject(const order_request& rq, int reason, std::string text);
  exec_report cancel_reject(const order_request& rq, int reason,
                            std::string text);
  void stamp(exec_report& r, std::vector<exec_report>& out);

  std::string symbol_;
  uint64_t requests_ = 0;
  uint64_t reports_ = 0;
  uint64_t next_order_ = 0;
  std::map<int64_t, level, std::greater<int64_t>> bids_;
  std::map<int64_t, level> asks_;
  std::unordered_map<uint64_t, resting_order> orders_;
  // "<session>/<ClOrdID>" of each resting order's current ClOrdID.
  std::unordered_map<std::string, uint64_t> by_cl_ord_id_;
};

/// The ClOrdID index key of `cl_ord_id` on `session`.
[[nodiscard]] std::string cl_ord_key(int session, const std::string& cl_ord_id);

} // namespace exchange
