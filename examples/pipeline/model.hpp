// SPDX-License-Identifier: Apache-2.0
#pragma once

// The pipeline's model, the reference a mode's measured row is read
// against: the same items through the same two stages on ideal slots, with
// no runtime cost.

#include <cstddef>
#include <vector>

#include "workload.hpp"

namespace pipeline_example {

/// What the model gives for a mode with a stateless second stage.
struct model_figures {
  double total_s = 0;
  /// Most results held at the sink (global order), and in front of stage
  /// 2 when it has a re-sequencer of its own (0 if not).
  size_t held_at_sink = 0;
  size_t held_after_1 = 0;
};

/// `items` through stage 1 (`fetch`) and stage 2 (`convert`), each
/// `slots` calls at a time: an item starts a stage as soon as a slot is
/// free, in the order items reach the stage (submission order for stage 1;
/// for stage 2 the order they leave stage 1, or submission order again
/// with `each_stage`'s re-sequencer), and results leave in submission
/// order.
[[nodiscard]] model_figures model(const std::vector<item>& items,
                                  size_t slots, bool each_stage);

} // namespace pipeline_example
