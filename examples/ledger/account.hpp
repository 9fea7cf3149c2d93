// SPDX-License-Identifier: Apache-2.0
#pragma once

// The ledger's business rules: what an event does to an account's state.

#include <cstdint>

#include <caf/meta/type_name.hpp>

#include "workload.hpp"

namespace ledger {

/// The state of one account: keylane's keyed state of its lane's handler.
struct account_state {
  bool opened = false;
  bool closed = false;
  int64_t balance = 0;
};

/// Lets keylane's codec write the state to its state store.
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, account_state& x) {
  return f(caf::meta::type_name("account_state"), x.opened, x.closed,
           x.balance);
}

/// Applies `ev` to `s` and returns true, or returns false and leaves `s`
/// unchanged when the event is rejected: opening an account twice, any
/// other event on an account that is not open (never opened, or closed),
/// or a withdrawal beyond the balance. In submission order no event of the
/// workload is rejected, so every rejection is a symptom of reordering.
[[nodiscard]] bool apply(account_state& s, const ledger_event& ev) noexcept;

} // namespace ledger
