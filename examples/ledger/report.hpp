// SPDX-License-Identifier: Apache-2.0
#pragma once

// Printing the three ways' figures: a table for people, JSON for scripts.

#include <ostream>
#include <vector>

#include <keylane/config.hpp>

#include "tally.hpp"
#include "workload.hpp"

namespace ledger {

/// Prints the workload, one row per way, the model's figures and the
/// lanes' speed-up over the partitions for the last cold account.
void print_table(std::ostream& out, const workload& w,
                 const keylane::settings& cfg,
                 const std::vector<way_result>& ways);

/// Prints one JSON object on one line, a member per way:
/// `{"shared_queue": {"violations": 12, ...}, "hash_partitions": ..., ...}`.
void print_json(std::ostream& out, const std::vector<way_result>& ways);

} // namespace ledger
