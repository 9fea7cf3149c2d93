// SPDX-License-Identifier: Apache-2.0
#include "account.hpp"

namespace ledger {

bool apply(account_state& s, const ledger_event& ev) noexcept {
  if (ev.kind == event_kind::open) {
    if (s.opened)
      return false;
    s.opened = true;
    return true;
  }
  if (!s.opened || s.closed)
    return false;
  switch (ev.kind) {
    case event_kind::deposit:
      s.balance += ev.amount;
      return true;
    case event_kind::withdraw:
      if (ev.amount > s.balance)
        return false;
      s.balance -= ev.amount;
      return true;
    case event_kind::close:
      s.closed = true;
      return true;
    case event_kind::open:
      break;
  }
  return false;
}

} // namespace ledger
