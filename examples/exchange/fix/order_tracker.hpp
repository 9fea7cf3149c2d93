// SPDX-License-Identifier: Apache-2.0
#pragma once

// What the load client knows of its orders: each request's first answer
// (its latency), each order's chain of ClOrdIDs through replaces, and the
// checks that reports arrive in each order's own sequence.

#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include <latency_histogram.hpp>

#include "fix_client.hpp"

namespace exchange {
namespace load {

/// A resting order the flow may cancel or replace.
struct live_order {
  uint32_t chain = 0;
  std::string cl_ord_id;  ///< its current ClOrdID
  std::string symbol;
  char side = '1';
  int64_t qty = 0;
  int64_t cum_qty = 0;
  double price = 0;
  std::string account;
};

/// Totals of a run.
struct tracker_totals {
  uint64_t sent = 0, sent_new = 0, sent_cancel = 0, sent_replace = 0;
  uint64_t send_failures = 0;
  uint64_t answered = 0;
  uint64_t fills = 0;
  uint64_t traded_orders = 0;  ///< new orders with at least one fill
  uint64_t rejects = 0, cancel_rejects = 0, session_rejects = 0,
           business_rejects = 0;
  uint64_t after_terminal = 0, cum_decreased = 0, wrong_first = 0,
           seq_not_increasing = 0, unknown_order = 0;
  /// Reports for orders an earlier run left resting (their ClOrdID lacks
  /// this run's prefix): fills against them are the server's right.
  uint64_t earlier_run_reports = 0;
  /// The first few out-of-sequence reports, described, for the FAIL text.
  std::vector<std::string> examples;
  uint64_t out_of_sequence() const {
    return after_terminal + cum_decreased + wrong_first + seq_not_increasing
           + unknown_order;
  }
  /// ns from scheduled send to first answer.
  keylane::common::latency_histogram latency;
};

/// Thread-safe: the sender registers requests, QuickFIX's thread reports
/// messages; one lock orders both. A request is registered before it is
/// sent, so its answer always finds it.
class order_tracker {
public:
  /// `run_prefix` starts every ClOrdID this run sends.
  explicit order_tracker(std::string run_prefix) : prefix_(std::move(run_prefix)) {}

  /// Registers a new order about to be sent at scheduled time `sched_ns`.
  void new_sent(int session, const std::string& cl_ord_id,
                const std::string& symbol, char side, double price,
                int64_t qty, const std::string& account, int64_t sched_ns);

  /// Takes a resting order of `session` for a cancel or replace: it stays
  /// out of reach until that request is answered. `pick(n)` chooses among
  /// n candidates. False if the session has none.
  bool take_live(int session, const std::function<size_t(size_t)>& pick,
                 live_order& out);

  /// Registers a cancel (`replace` false) or replace of `chain`.
  void change_sent(uint32_t chain, bool replace, const std::string& cl_ord_id,
                   int64_t sched_ns);

  /// Counts a request QuickFIX did not send (session down).
  void send_failed();

  /// Applies one incoming message.
  void on_message(const incoming& in);

  /// Requests not answered yet.
  uint64_t outstanding() const;

  /// A copy of the totals.
  tracker_totals totals() const;

private:
  struct chain {
    int session = 0;
    std::string symbol, account;
    char side = '1';
    int64_t qty = 0, cum = 0;
    double price = 0;
    std::string cl_ord_id;
    bool acked = false, terminal = false, pending = false, traded = false;
    int live_pos = -1;
  };
  struct request {
    uint32_t chain;
    char kind;  // 'D', 'F', 'G'
    int64_t sched_ns;
    bool answered = false;
  };

  void add_request(uint32_t chain, char kind, const std::string& cl, int64_t sched_ns);
  void update_live(uint32_t id);
  void on_exec_report(const incoming& in, request& rq, chain& ch);
  void note(uint64_t& counter, const char* what, const incoming& in);

  const std::string prefix_;
  mutable std::mutex mutex_;
  tracker_totals t_;
  std::vector<chain> chains_;
  std::vector<request> requests_;
  std::unordered_map<std::string, uint32_t> by_cl_;       // ClOrdID -> request
  std::vector<std::vector<uint32_t>> live_;               // session -> chains
  std::vector<std::unordered_map<std::string, uint64_t>> last_seq_; // session -> symbol -> 20001
};

} // namespace load
} // namespace exchange
