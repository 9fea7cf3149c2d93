// SPDX-License-Identifier: Apache-2.0
#pragma once

// The retry scenario's handler: the ledger handler, with failures injected
// from a fault plan before the event reaches the database.

#include <memory>

#include "fault_plan.hpp"
#include "ledger_handler.hpp"

namespace ledger {

/// Runs each attempt past `faults` first: an attempt that meets a fault
/// fails (retryably or for good) after the event's round-trip latency,
/// without touching the account; any other attempt is the ledger handler's.
class faulty_handler : public ledger_handler {
public:
  faulty_handler(const keylane::handler_params& params,
                 std::shared_ptr<lane_context> ctx,
                 std::shared_ptr<fault_plan> faults);

  void on_event(ledger_event& ev,
                keylane::completion<ledger_result> done) override;

private:
  std::shared_ptr<fault_plan> faults_;
};

} // namespace ledger
