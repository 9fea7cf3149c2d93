// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstddef>
#include <memory>
#include <string>

#include <caf/expected.hpp>

#include "keylane/detail/metrics_source.hpp"

// keylane::metrics's entry point, declared weak for the engine, which opens
// the `metrics.listen` endpoint (see detail/state_components.hpp for why).
// The endpoint itself (detail/metrics_endpoint.hpp) builds on the runtime;
// the engine knows it only through this entry and the source it reads.
namespace keylane::detail {

/// `metrics_endpoint::open(listen, threads, source)`, the endpoint owned by
/// the returned pointer (its deleter lives in the component); null unless
/// keylane::metrics is linked.
[[gnu::weak]] caf::expected<std::shared_ptr<void>>
component_open_metrics_endpoint(const std::string& listen, size_t threads,
                                metrics_source source);

} // namespace keylane::detail
