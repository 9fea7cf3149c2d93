// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <functional>
#include <vector>

#include <caf/expected.hpp>

#include "keylane/park_store.hpp"
#include "keylane/stats.hpp"

// What the engine hands the metrics endpoint: declared with the engine, which
// builds it, so the endpoint (keylane::metrics, above the runtime) depends on
// the engine and not the other way round.
namespace keylane::detail {

/// Where a `metrics_endpoint` reads its values: called on each scrape and
/// never otherwise, so nothing is recorded per event for the endpoint.
struct metrics_source {
  /// The runtime's counters (`engine::snapshot`).
  std::function<keylane::stats()> stats;
  /// The parked keys (`engine::parked_keys`). An error leaves the two
  /// parked gauges out of that scrape; the rest is served.
  std::function<caf::expected<std::vector<parked_key>>()> parked;
};

} // namespace keylane::detail
