// SPDX-License-Identifier: Apache-2.0
#pragma once

// Runs the export once in one mode and measures it.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <caf/expected.hpp>

#include <keylane/config.hpp>

#include <progress.hpp>

#include "kept_runtime.hpp"
#include "modes.hpp"
#include "workload.hpp"

namespace ordered_export {

/// The figures of one mode.
struct mode_result {
  std::string name;
  std::string title;
  std::optional<reference> ref;
  /// Start of the submits to the last output, and to the first.
  double total_s = 0;
  double first_result_s = 0;
  /// Most results the sink held in memory at once (`peak_sink_buffered`).
  uint64_t peak_buffered = 0;
  /// Results written to the spill file.
  uint64_t spilled = 0;
  /// The share of the lane slots' time that no handler call held:
  /// 1 - busy / (max_active_keys x total).
  double idle_share = 0;
  /// Outputs that were tombstones, not results.
  uint64_t tombstones = 0;
  /// Outputs out of the mode's promised order.
  uint64_t violations = 0;
  /// Rows delivered twice, and never.
  uint64_t duplicates = 0;
  uint64_t missing = 0;
  /// The settings that matter for reading the row.
  uint64_t slots = 0;
  uint64_t window = 0;
  uint64_t window_max = 0;
};

/// Runs `items` through a runtime of `cfg` (the base settings with the
/// keys of `m` applied), keyed as `m` says, and measures it; counts each
/// output on `shown`. The runtime is left in `kept` (replacing the one
/// kept before) for --serve; it is idle once this returns.
[[nodiscard]] caf::expected<mode_result>
run_mode(const mode& m, const keylane::settings& cfg,
         const std::vector<export_item>& items, keylane::cli::progress* shown,
         kept_runtime& kept);

} // namespace ordered_export
