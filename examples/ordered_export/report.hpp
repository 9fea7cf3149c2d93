// SPDX-License-Identifier: Apache-2.0
#pragma once

// The export's report: a table with the model's figures beside each
// row, or one JSON object per mode.

#include <ostream>
#include <vector>

#include "run_mode.hpp"
#include "workload.hpp"

namespace ordered_export {

/// Prints the table of `rows` for the workload `spec`, then how the spill
/// and automatic-window modes compare with the unbounded buffer.
void print_table(std::ostream& out, const workload_spec& spec,
                 uint64_t slots, const std::vector<mode_result>& rows);

/// Prints one JSON object per row, one per line: mode, total_s,
/// first_result_s, peak_buffered, spilled, idle_share, tombstones,
/// violations (names scripts rely on).
void print_json(std::ostream& out, const std::vector<mode_result>& rows);

} // namespace ordered_export
