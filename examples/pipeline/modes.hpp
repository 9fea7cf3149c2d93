// SPDX-License-Identifier: Apache-2.0
#pragma once

// The ways the example runs its two stages, and what one run measured.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <keylane/config.hpp>

#include "model.hpp"
#include "workload.hpp"

namespace pipeline_example {

/// One way to run the items through fetch and a second stage.
struct mode {
  const char* name;
  /// The second stage: convert, or the running total (stateful).
  bool stateful;
  /// Re-sequence (global order) in front of the second stage too, not
  /// only at the sink.
  bool each_stage;
  /// For the stateful stage: `ordered` (a per-key re-sequencer in front);
  /// false runs it `keyed`, without one, to show what that breaks.
  bool resequenced;
  /// What a stateful mode's results must be ("" for none); the others
  /// are compared with the model's figures (model.hpp).
  const char* reference;
};

/// Every mode, in the order they run.
[[nodiscard]] const std::vector<mode>& all_modes();

/// What one mode's run measured.
struct mode_result {
  std::string mode;
  double total_s = 0;
  double first_result_s = 0;
  /// Most results the sink's re-sequencing held.
  size_t peak_buffered = 0;
  /// Most items each stage's re-sequencer held (0: it has none).
  std::vector<size_t> stage_peaks;
  uint64_t delivered = 0;
  uint64_t tombstones = 0;
  /// Outputs out of submission order, missing or repeated.
  uint64_t violations = 0;
  /// Results that differ from the sequential reference.
  uint64_t mismatches = 0;
  std::string reference;
  /// The model's figures, for a stateless second stage.
  std::optional<model_figures> model;
  /// The run failed to start or to finish (the reason).
  std::string error;
};

/// Runs `items` through `m`, on `base` settings (order global).
[[nodiscard]] mode_result run_mode(const mode& m, const keylane::settings& base,
                                   const std::vector<item>& items);

} // namespace pipeline_example
