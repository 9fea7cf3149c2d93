// SPDX-License-Identifier: Apache-2.0
#pragma once

// Printing the retry scenario: a few lines for people, one JSON line for
// scripts.

#include <ostream>

#include "retry_scenario.hpp"
#include "retry_verdict.hpp"

namespace ledger {

/// Prints the setup, what happened to the faulty accounts, the others and
/// the replay, and the verdict with each difference from the expectation.
void print_retry_text(std::ostream& out, const retry_spec& spec,
                      const retry_observed& obs, const retry_verdict& v);

/// Prints one JSON object on one line. Its first four members are a
/// contract with users' scripts:
/// `{"order_kept": true, "parked": {"acct-9": 5}, "retried": {"acct-5": 2},
/// "replayed_in_order": true, ...}`; the rest (`as_expected`, counts,
/// seconds, `problems`) may grow.
void print_retry_json(std::ostream& out, const retry_observed& obs,
                      const retry_verdict& v);

} // namespace ledger
