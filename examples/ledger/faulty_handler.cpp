// SPDX-License-Identifier: Apache-2.0
#include "faulty_handler.hpp"

#include <utility>

namespace ledger {

faulty_handler::faulty_handler(const keylane::handler_params& params,
                               std::shared_ptr<lane_context> ctx,
                               std::shared_ptr<fault_plan> faults)
  : ledger_handler(params, std::move(ctx)), faults_(std::move(faults)) {}

void faulty_handler::on_event(ledger_event& ev,
                              keylane::completion<ledger_result> done) {
  auto f = faults_->strike(ev);
  if (!f) {
    ledger_handler::on_event(ev, std::move(done));
    return;
  }
  // A failing request still costs its round trip; failing at once would
  // make the retries look cheaper than they are.
  run_later(ev.latency, [d = std::move(done), f = std::move(*f)]() mutable {
    if (f.permanent)
      d.fail_permanently(f.reason);
    else
      d.fail(f.reason);
  });
}

} // namespace ledger
