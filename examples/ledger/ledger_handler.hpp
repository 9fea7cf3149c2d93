// SPDX-License-Identifier: Apache-2.0
#pragma once

// The keylane handler of the ledger: one instance per active account.

#include <chrono>
#include <cstdint>
#include <memory>

#include <caf/actor.hpp>

#include <keylane/config.hpp>
#include <keylane/stateful_handler.hpp>

#include "account.hpp"
#include "tally.hpp"
#include "workload.hpp"

namespace ledger {

/// What an applied event returns.
struct ledger_result {
  /// False when the ledger rules rejected the event.
  bool accepted = false;
  /// The balance after the event.
  int64_t balance = 0;
};

/// The handler's knobs, from `[handler.ledger]`.
struct handler_options {
  /// How long a database request may take before the event fails.
  std::chrono::milliseconds db_timeout{5000};

  /// Reads `db_timeout_ms` (>= 1); problems are recorded in `params`.
  static handler_options from(const keylane::handler_params& params);
};

/// What every lane's handler shares: the database actor and the way's
/// tally. Filled before the first event is submitted.
struct lane_context {
  explicit lane_context(const workload& w,
                        keylane::cli::progress* shown = nullptr)
    : measured(w, shown) {}
  caf::actor db;
  tally measured;
};

/// Sends each event to the database and applies it to the account's state
/// when the database answers. The state is keylane's keyed state
/// (`[state]`): loaded before the account's first event, kept across its
/// lane's retires (and, with `state.store = "rocksdb"`, restarts), and
/// undone when an attempt fails. keylane starts the next event of the
/// account only after the previous one completed, so it needs no lock.
class ledger_handler
  : public keylane::stateful_handler<ledger_event, ledger_result,
                                     account_state> {
public:
  ledger_handler(const keylane::handler_params& params,
                 std::shared_ptr<lane_context> ctx);

  void on_event(ledger_event& ev,
                keylane::completion<ledger_result> done) override;

private:
  handler_options options_;
  std::shared_ptr<lane_context> ctx_;
};

} // namespace ledger
