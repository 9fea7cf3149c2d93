// SPDX-License-Identifier: Apache-2.0
#pragma once

// The ledger's model, the reference its measured rows are read against:
// the same events with no runtime cost, all submitted at once.

#include <cstddef>

#include "workload.hpp"

namespace ledger {

/// When accounts' last events end in a model, in seconds from the start.
struct model_figures {
  double cold_median_s = 0;
  double cold_last_s = 0;
  double hot_last_s = 0;
};

/// Hash partitions: `workers` threads, an account always on thread
/// `keylane::stable_hash(name) % workers`, each running its events one
/// after another in submission order, each taking its latency.
[[nodiscard]] model_figures model_hash_partitions(const workload& w,
                                                  unsigned workers);

/// Key lanes: at most `cap` accounts hold a lane; an account takes a free
/// one in the order of its first event, runs all its events one after
/// another and gives the lane up as it runs dry.
[[nodiscard]] model_figures model_key_lanes(const workload& w, size_t cap);

} // namespace ledger
