// SPDX-License-Identifier: Apache-2.0
#pragma once

// The three ways of running the ledger workload. Each runs the whole
// workload, measures from the moment it starts submitting and returns
// when every event finished. Each counts finished events on `shown`, the
// progress line, if given.

#include <caf/expected.hpp>

#include <keylane/config.hpp>

#include "live_lanes.hpp"
#include "tally.hpp"
#include "workload.hpp"

namespace ledger {

/// Workers of the baselines (and the lanes' default `max_active_keys`).
inline constexpr unsigned worker_count = 8;

/// `worker_count` threads popping one shared queue: fast, but an account's
/// events run concurrently and finish out of order.
[[nodiscard]] way_result run_shared_queue(const workload& w,
                                          keylane::cli::progress* shown);

/// `worker_count` threads with a queue each; an account always goes to
/// queue `keylane::stable_hash(name) % worker_count`: ordered, but the hot
/// account delays every account that shares its queue.
[[nodiscard]] way_result run_hash_partitions(const workload& w,
                                             keylane::cli::progress* shown);

/// A keylane runtime built from `cfg` (handler "ledger"), talking to a
/// simulated database actor: ordered per account, accounts independent.
/// The runtime is started in `live` and, when all went well, left running
/// there (idle) for the caller to stop or serve; it is stopped on failure.
/// Fails if the runtime cannot start, a submit is rejected, the drain
/// times out or an event does not end ok.
[[nodiscard]] caf::expected<way_result>
run_key_lanes(const workload& w, keylane::settings cfg, live_lanes& live,
              keylane::cli::progress* shown);

} // namespace ledger
