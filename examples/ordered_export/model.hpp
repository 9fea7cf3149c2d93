// SPDX-License-Identifier: Apache-2.0
#pragma once

// The export's model, the reference a mode's measured row is read against:
// the same rows on ideal slots, with no runtime cost.

#include <cstddef>
#include <vector>

#include "modes.hpp"
#include "workload.hpp"

namespace ordered_export {

/// The model's total time and peak results held for `items` on `slots`
/// calls at a time: rows start in submission order, each as soon as a slot
/// is free (and, with a window, once the row `window` places before it was
/// delivered), and take their `work`; delivery costs nothing.
[[nodiscard]] reference model(const std::vector<export_item>& items,
                              size_t slots, const model_spec& spec);

} // namespace ordered_export
