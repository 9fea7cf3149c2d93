#pragma once

// The ledger's business rules: what an event does to an account's state.

#include <cstdint>

#include "workload.hpp"

namespace ledger {

/// The state of one account, as the "database" stores it.
struct account_state {
  bool opened = false;
  bool closed = false;
  int64_t balance = 0;
};

/// Applies `ev` to `s` and returns true, or returns false and leaves `s`
/// unchanged when the event is rejected: opening an account twice, any
/// other event on an account that is not open (never opened, or closed),
/// or a withdrawal beyond the balance. In submission order no event of the
/// workload is rejected, so every rejection is a symptom of reordering.
[[nodiscard]] bool apply(account_state& s, const ledger_event& ev) noexcept;

} // namespace ledger
