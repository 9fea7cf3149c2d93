// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstddef>

#include <caf/expected.hpp>

namespace keylane {
class state_store;
} // namespace keylane

namespace keylane::detail {

class logger;
class messaging;
struct payload_ops;

/// Sends again every message the records of `store` keep (before events
/// flow, so they reach each target ahead of anything newer from the same
/// sender); the count sent.
[[nodiscard]] caf::expected<size_t>
resend_kept_messages(state_store& store, messaging& msg,
                     const payload_ops& ops, logger& log);

} // namespace keylane::detail
