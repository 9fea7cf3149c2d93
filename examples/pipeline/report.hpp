// SPDX-License-Identifier: Apache-2.0
#pragma once

// The pipeline example's output: a table, or one JSON object per mode.

#include <ostream>
#include <vector>

#include "modes.hpp"

namespace pipeline_example {

void print_table(std::ostream& out, const std::vector<mode_result>& rows,
                 uint64_t items);

void print_json(std::ostream& out, const std::vector<mode_result>& rows);

} // namespace pipeline_example
