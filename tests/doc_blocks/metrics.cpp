// SPDX-License-Identifier: Apache-2.0
// doc:begin docs/metrics.md
#include <prometheus/exposer.h>   // prometheus-cpp::pull
#include <prometheus/registry.h>
#include <keylane/metrics.hpp>
// doc:end
// The block above opens the file, so its #includes are all the code below
// compiles with.

// What docs/metrics.md's registration assumes: the runtime a server
// started.
namespace metrics_doc {

void serve(caf::expected<std::unique_ptr<keylane::runtime<long, long>>>& rt) {
// doc:begin docs/metrics.md
prometheus::Exposer exposer{"0.0.0.0:9100"};         // the host's endpoint
auto registry = std::make_shared<prometheus::Registry>(); // the host's metrics
exposer.RegisterCollectable(registry);
auto keylane_metrics = keylane::metrics_collectable(**rt);
exposer.RegisterCollectable(keylane_metrics);     // keep keylane_metrics alive
// doc:end
}

} // namespace metrics_doc
