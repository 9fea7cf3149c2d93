// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>

#include <caf/expected.hpp>
#include <caf/timespan.hpp>

namespace keylane {
class state_store;
} // namespace keylane

namespace keylane::detail {

class logger;
class messaging;
struct payload_ops;

/// Fires timer `id` of `messaging` after `delay`.
using arm_fn = std::function<void(uint64_t id, caf::timespan delay)>;

/// Sends again every message the records of `store` keep (before events
/// flow, so they reach each target ahead of anything newer from the same
/// sender), and arms again every timer they keep (`arm`; a timer due
/// already is sent at once); the count of both.
[[nodiscard]] caf::expected<size_t>
resend_kept_messages(state_store& store, messaging& msg,
                     const payload_ops& ops, logger& log, const arm_fn& arm);

} // namespace keylane::detail
