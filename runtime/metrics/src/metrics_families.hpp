// SPDX-License-Identifier: Apache-2.0
#pragma once

// What metrics_endpoint.cpp serves: the metric families of one scrape,
// built from one snapshot. The names are a contract with users' dashboards
// (docs/metrics.md): add new ones, never rename or retype one.

#include <vector>

#include <caf/expected.hpp>
#include <prometheus/metric_family.h>

#include "keylane/metrics.hpp"
#include "keylane/park_store.hpp"
#include "keylane/stats.hpp"

namespace keylane::detail {

/// The `keylane_*` families for `s`, plus `keylane_parked_keys` and
/// `keylane_parked_events` when `parked` holds a value.
[[nodiscard]] std::vector<prometheus::MetricFamily>
metric_families(const keylane::stats& s,
                const caf::expected<std::vector<parked_key>>& parked);

} // namespace keylane::detail
