// SPDX-License-Identifier: Apache-2.0
#pragma once

// The two matchers the exchange can run (`--matcher`): books on keylane,
// one lane per symbol, or the single matcher trading teams start from (one
// thread takes each order to the end, risk check included, before the
// next, as QuickFIX's ordermatch example does).

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

#include <caf/expected.hpp>

#include <keylane/config.hpp>

#include "orders.hpp"
#include "report_out.hpp"
#include "risk.hpp"
#include "symbols.hpp"

namespace exchange {

/// What both matchers are told.
struct matcher_options {
  uint32_t symbols = 1000;
  /// Check every new order and replace: the risk actor (single matcher),
  /// the order's account key (keylane matcher).
  bool risk = true;
  risk_settings risk_cfg;
  std::chrono::milliseconds risk_timeout{1000};
};

/// Counters of the books, for the report at exit.
struct book_counts {
  uint64_t retires = 0;
  uint64_t resting_kept = 0; ///< resting orders handed over at retires
  uint64_t restored = 0;     ///< activations that got resting orders back
  uint64_t active_lanes = 0;
  uint64_t fills_refused = 0; ///< keylane: fills not told to an account
};

/// Takes requests from the FIX threads and answers each through
/// `report_out`, every symbol's reports in the symbol's sequence.
///
/// Thread-safety: `take` from any thread, each session's requests in its
/// order; `drain` and `stop` from the owner.
class matcher {
public:
  virtual ~matcher() = default;

  /// Validates `rq` and queues it for its symbol's book.
  virtual void take(order_request&& rq) = 0;

  /// Waits until every request taken so far was answered; false on timeout.
  virtual bool drain(std::chrono::milliseconds timeout) = 0;

  /// Stops; requests not answered yet are dropped.
  virtual void stop() = 0;

  [[nodiscard]] virtual book_counts books() const = 0;
};

/// The books on keylane, tuned by `cfg` (`[runtime] order = "per_key"`).
[[nodiscard]] caf::expected<std::unique_ptr<matcher>>
start_keylane_matcher(keylane::settings cfg, const matcher_options& opts,
                      report_out& out);

/// The single matcher; its risk actor runs in an actor system of its own.
[[nodiscard]] std::unique_ptr<matcher>
start_single_matcher(const matcher_options& opts, report_out& out);

} // namespace exchange
