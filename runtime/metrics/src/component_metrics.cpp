// SPDX-License-Identifier: Apache-2.0
// keylane::metrics's entry point for the core (see detail/metrics_component.hpp,
// which this file must not include: the definition here must be strong).
#include <cstddef>
#include <memory>
#include <string>
#include <utility>

#include <caf/expected.hpp>

#include "keylane/detail/metrics_endpoint.hpp"

namespace keylane::detail {

caf::expected<std::shared_ptr<void>>
component_open_metrics_endpoint(const std::string& listen, size_t threads,
                                metrics_source source);

caf::expected<std::shared_ptr<void>>
component_open_metrics_endpoint(const std::string& listen, size_t threads,
                                metrics_source source) {
  auto ep = metrics_endpoint::open(listen, threads, std::move(source));
  if (!ep)
    return std::move(ep.error());
  // The deleter is compiled here, so the core never names ~metrics_endpoint.
  return std::shared_ptr<void>{std::move(*ep)};
}

} // namespace keylane::detail

// The anchor keylane::metrics's link options name, so the linker takes this
// file (and the entry point above) from the archive.
extern "C" void keylane_component_metrics() {}
