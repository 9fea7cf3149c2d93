// SPDX-License-Identifier: Apache-2.0
#pragma once

// The retry scenario: a small ledger workload through keylane lanes with a
// retry policy and injected failures, then an operator's look at the parked
// account, its fix and its replay. This file runs it and records what
// happened; retry_verdict.hpp judges it, retry_report.hpp prints it.

#include <cstdint>
#include <string>
#include <vector>

#include <caf/expected.hpp>

#include <keylane/config.hpp>
#include <keylane/outcome.hpp>
#include <keylane/park_store.hpp>
#include <keylane/stats.hpp>

#include "live_lanes.hpp"
#include "tally.hpp"
#include "workload.hpp"

namespace ledger {

/// The shape of the scenario and the faults it injects.
struct retry_spec {
  /// Seed of the workload.
  uint64_t seed = 42;
  /// Accounts, each with the same number of events.
  uint32_t accounts = 40;
  uint32_t events_per_account = 5;
  /// This account's event `transient_index` fails retryably
  /// `transient_failures` times, then succeeds.
  uint32_t transient_account = 5;
  uint32_t transient_index = 1;
  uint32_t transient_failures = 2;
  /// This account's event `permanent_index` fails for good until the
  /// operator fixes it, then the account is replayed.
  uint32_t permanent_account = 9;
  uint32_t permanent_index = 0;
};

/// The workload of `spec`: `accounts` x `events_per_account` events with
/// the usual 1-4 ms database round trip.
[[nodiscard]] workload make_retry_workload(const retry_spec& spec);

/// One output as the application saw it.
struct output_record {
  uint32_t index = 0;
  keylane::outcome status = keylane::outcome::pending;
  /// Handler attempts (0 for an event parked behind its key's failure).
  uint32_t attempts = 0;
  /// The ledger's result, for `ok` outputs.
  bool accepted = false;
  int64_t balance = 0;
  /// The failure or parking reason, otherwise empty.
  std::string error;
};

/// Outputs of one pass, by account number, in the order they came out.
using pass_outputs = std::vector<std::vector<output_record>>;

/// Everything the scenario observed.
struct retry_observed {
  workload w;
  /// The settings the runtime ran with.
  keylane::settings cfg;
  /// Outputs of the first pass (every submitted event) and of the replay.
  pass_outputs first_pass;
  pass_outputs replay_pass;
  /// `parked_keys()` after the first pass and after the replay.
  std::vector<keylane::parked_key> parked_before;
  std::vector<keylane::parked_key> parked_after;
  /// The payloads `parked_events()` listed for the permanently failing
  /// account, in its order.
  std::vector<ledger_event> parked_list;
  /// What `replay()` returned.
  uint64_t replayed = 0;
  /// `stats()` after the replay drained.
  keylane::stats stats;
  /// The handler's order and business checks over both passes.
  way_result measured;
  /// Seconds from the first submit to the first drain, and for the replay.
  double first_pass_s = 0;
  double replay_s = 0;
};

/// Runs the scenario with `cfg` (handler "ledger"): submits the workload,
/// drains, reads the parked account back, clears its fault, replays it and
/// drains again. The runtime is started in `live` and, when all went well,
/// left running there (idle) for the caller to stop or serve; it is
/// stopped on failure. Counts finished events on `shown`, if given. Fails
/// when the runtime cannot start, a submit is rejected, a drain times out
/// or an operator call fails.
[[nodiscard]] caf::expected<retry_observed>
run_retry_scenario(const retry_spec& spec, keylane::settings cfg,
                   live_lanes& live, keylane::cli::progress* shown);

/// How many outputs the scenario produces: every event once, and the
/// replayed ones again (for the progress line).
[[nodiscard]] uint64_t expected_outputs(const retry_spec& spec);

} // namespace ledger
