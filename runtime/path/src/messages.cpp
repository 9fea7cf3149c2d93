// SPDX-License-Identifier: Apache-2.0
#include "keylane/detail/messages.hpp"

#include "keylane/detail/stop_ledger.hpp"

namespace keylane::detail {

event_batch::~event_batch() {
  for (auto& ev : items)
    if (ev)
      ledger->abandon(std::move(ev), stage);
}

} // namespace keylane::detail
