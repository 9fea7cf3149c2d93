// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstdint>

#include <caf/timespan.hpp>

#include "keylane/key.hpp"

namespace keylane::testing {

/// How a message left a handler.
enum class message_kind {
  /// `tell`: an event for another key, behind its queued events.
  tell,
  /// `ask`: as `tell`, and the asker waits for the target event's end.
  ask,
  /// `tell_after`: a `tell` that waited `delay` on the test's clock.
  timer,
};

/// A message a handler under test sent, as the kit recorded it when it
/// left the handler's attempt (a tell made inside an attempt leaves when
/// the event ends ok or skipped; a failed attempt's tells never leave).
template <class Payload>
struct sent_message {
  /// The kit's number for it: pass it to `kit::answer` or `kit::fail_ask`.
  uint64_t id = 0;
  /// The key whose handler sent it.
  keylane::key from;
  /// The key it is for.
  keylane::key to;
  /// A copy of what it carried.
  Payload payload;
  /// tell, ask or timer.
  message_kind kind = message_kind::tell;
  /// An ask's timeout.
  caf::timespan timeout{};
  /// A timer's delay.
  caf::timespan delay{};
};

} // namespace keylane::testing
