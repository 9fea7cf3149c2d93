// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstdint>

namespace keylane {

/// How an accepted event ended. Every accepted event ends exactly once.
enum class outcome : uint8_t {
  /// Still queued or running (never seen in an output).
  pending = 0,
  /// The handler produced a result.
  ok,
  /// The handler skipped the event: a tombstone, no result.
  skipped,
  /// The handler failed, threw, or dropped its completion: a tombstone
  /// carrying the error text.
  failed,
  /// Retries ran out or the failure was permanent, or an earlier event of
  /// its key is parked: the event waits in the park store for an operator
  /// to replay or discard it. A tombstone carrying the reason.
  parked,
};

/// Returns "ok", "skipped", "failed", "parked" or "pending".
[[nodiscard]] const char* to_string(outcome x) noexcept;

} // namespace keylane
