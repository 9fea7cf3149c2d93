#pragma once

// The keylane handler of the ledger: one instance per active account.

#include <chrono>
#include <cstdint>
#include <memory>

#include <caf/actor.hpp>

#include <keylane/config.hpp>
#include <keylane/handler.hpp>

#include "account.hpp"
#include "store.hpp"
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

/// What every lane's handler shares: the store, the database actor and the
/// way's tally. Filled before the first event is submitted.
struct lane_context {
  explicit lane_context(const workload& w,
                        keylane::cli::progress* shown = nullptr)
    : measured(w, shown) {}
  account_store store;
  caf::actor db;
  tally measured;
};

/// Loads the account's state when its lane starts, sends each event to the
/// database and applies it when the database answers, and flushes the state
/// when the lane retires. keylane starts the next event of the account only
/// after the previous one completed, so the state needs no lock.
class ledger_handler : public keylane::handler<ledger_event, ledger_result> {
public:
  ledger_handler(const keylane::handler_params& params,
                 std::shared_ptr<lane_context> ctx);

  void on_activate(const keylane::key& k) override;

  void on_event(ledger_event& ev,
                keylane::completion<ledger_result> done) override;

  void on_retire(const keylane::key& k) override;

private:
  handler_options options_;
  std::shared_ptr<lane_context> ctx_;
  account_state state_;
};

} // namespace ledger
