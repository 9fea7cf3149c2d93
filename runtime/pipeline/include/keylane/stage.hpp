// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "keylane/config.hpp"

namespace keylane {

/// How a pipeline stage runs its events.
enum class stage_kind {
  /// Stateless: events run concurrently in any order, each in a lane of its
  /// own (up to the stage's concurrency at once).
  unordered,
  /// One lane per key: a key's events run one at a time, in the order they
  /// reach the stage. Behind an `unordered` stage that is completion order,
  /// not submission order; use `ordered` when the stage depends on it.
  keyed,
  /// A re-sequencer in front restores submission order (per key unless
  /// `stage_spec::resequence` says global), then one lane per key runs the
  /// key's events in submission order: for stateful stages such as a
  /// running total per account.
  ordered,
};

/// Returns "unordered", "keyed" or "ordered".
[[nodiscard]] const char* to_string(stage_kind x) noexcept;

/// How one pipeline stage is run.
struct stage_spec {
  /// Shown in stats and in the error of an event the stage failed.
  std::string name;
  /// How its events run.
  stage_kind kind = stage_kind::unordered;
  /// Most events (lanes) the stage runs at once; 0 takes the pipeline's
  /// `max_active_keys`.
  size_t concurrency = 0;
  /// The order a re-sequencer in front of the stage restores before the
  /// stage sees its events: `none` (no re-sequencer), `per_key` (enough for
  /// per-key state; holds least) or `global` (for example in front of an
  /// `unordered` stage whose output must start in submission order). An
  /// `ordered` stage always has one: `none` means `per_key` there.
  order_mode resequence = order_mode::none;
};

/// Counters of one pipeline stage.
struct stage_stats {
  std::string name;
  stage_kind kind = stage_kind::unordered;
  /// Events the stage started (those that ended earlier as tombstones
  /// skip it).
  uint64_t entered = 0;
  /// How the stage ended them.
  uint64_t ok = 0;
  uint64_t skipped = 0;
  uint64_t failed = 0;
  uint64_t parked = 0;
  /// Items its re-sequencer holds now, and held at most (0 without one).
  size_t held = 0;
  size_t peak_held = 0;
};

/// A snapshot of a pipeline's counters.
struct pipeline_stats {
  uint64_t accepted = 0;
  uint64_t delivered = 0;
  /// Per stage, in pipeline order.
  std::vector<stage_stats> stages;
  /// Results the final re-sequencing (`order`) holds now, and at most.
  size_t held = 0;
  size_t peak_held = 0;
};

} // namespace keylane
