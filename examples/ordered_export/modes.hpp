// SPDX-License-Identifier: Apache-2.0
#pragma once

// The ways the export runs: one base configuration, and per mode the few
// keys that make it that mode (order, window, spill, attempt timeout).

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace ordered_export {

/// What a mode uses as the key of a row.
enum class keying {
  /// Each row is its own key ("row-17"): the rows are independent.
  per_row,
  /// The row's customer ("customer-17", `index % 100`): a customer's rows
  /// are exported in order, one at a time.
  per_customer,
};

/// The reference figures of a mode: what its model gives (model.hpp).
struct reference {
  double total_s = 0;
  /// Peak results held in memory.
  size_t peak = 0;
};

/// What the model of a mode assumes beyond the rows (model.hpp).
struct model_spec {
  /// Results leave in submission order (held until every earlier row's
  /// result left); false: each as it ends, nothing held.
  bool global = false;
  /// Rows admitted and not yet delivered, at most (0: unbounded).
  size_t window = 0;
};

/// One way of running the export.
struct mode {
  /// The `mode` member of the JSON ("global_window_64").
  std::string name;
  /// The row of the table ("global, window 64").
  std::string title;
  /// The keys this mode sets on top of the base settings, as `--set` would.
  std::vector<std::string> keys;
  keying keys_by = keying::per_row;
  /// The model its reference figures are computed from, for the modes
  /// that have one.
  std::optional<model_spec> model;
  /// True for the mode that lets stragglers time out into tombstones.
  bool times_out = false;
};

/// What the modes' keys depend on.
struct mode_params {
  /// The directory of the spill mode's `sink.spill_path`.
  std::string spill_dir;
  /// The fixed window of the window modes.
  size_t window = 64;
  /// The `runtime.window_max` of the automatic window.
  size_t window_max = 512;
  /// The timeout mode's `retry.attempt_timeout_ms`.
  size_t attempt_timeout_ms = 100;
};

/// Every mode, in the order they run: unordered, global unbounded, global
/// window, per-key, global auto, global window with spill, global window
/// with an attempt timeout.
[[nodiscard]] std::vector<mode> all_modes(const mode_params& p);

} // namespace ordered_export
