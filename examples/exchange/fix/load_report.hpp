// SPDX-License-Identifier: Apache-2.0
#pragma once

// order_entry_load's report: a table or one JSON object, and the verdict.

#include <string>
#include <vector>

#include "load_options.hpp"
#include "load_run.hpp"

namespace exchange {
namespace load {

/// Why the run failed, one line each; empty if it passed (every request
/// answered, nothing out of sequence, no session dropped).
std::vector<std::string> verdict(const run_result& r);

/// Prints the table (or, with o.json, one JSON object) to stdout.
void print_report(const load_options& o, const run_result& r);

} // namespace load
} // namespace exchange
