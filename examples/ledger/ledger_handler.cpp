// SPDX-License-Identifier: Apache-2.0
#include "ledger_handler.hpp"

#include <string>
#include <utility>

#include <caf/error.hpp>

#include "database.hpp"

namespace ledger {

handler_options handler_options::from(const keylane::handler_params& params) {
  handler_options opts;
  auto ms = params.get_int("db_timeout_ms", opts.db_timeout.count());
  if (ms < 1)
    params.reject("db_timeout_ms", "must be >= 1 (milliseconds)");
  else
    opts.db_timeout = std::chrono::milliseconds{ms};
  return opts;
}

ledger_handler::ledger_handler(const keylane::handler_params& params,
                               std::shared_ptr<lane_context> ctx)
  : options_(handler_options::from(params)), ctx_(std::move(ctx)) {}

void ledger_handler::on_event(ledger_event& ev,
                              keylane::completion<ledger_result> done) {
  // CAF copies both response handlers, and either may finish the event.
  auto pending = std::move(done).share();
  self()
    ->request(ctx_->db, options_.db_timeout, apply_atom::value,
              static_cast<int64_t>(ev.latency.count()))
    .then(
      [this, ev, pending](int64_t) {
        bool accepted = apply(state(), ev);
        ctx_->measured.applied(ev, accepted);
        pending.ok(ledger_result{accepted, state().balance});
      },
      [pending](caf::error& err) {
        pending.fail("database: " + caf::to_string(err));
      });
}

} // namespace ledger
