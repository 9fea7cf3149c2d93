// SPDX-License-Identifier: Apache-2.0
#pragma once

// keylane's metrics for a program that serves Prometheus itself: part of
// keylane::metrics (find_package(keylane COMPONENTS metrics)), which brings
// prometheus-cpp's core. A program that links the core alone never
// includes this header, and names no prometheus-cpp type.

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <prometheus/collectable.h>
#include <prometheus/metric_family.h>

#include "keylane/detail/metrics_endpoint.hpp"
#include "keylane/detail/read_gate.hpp"
#include "keylane/runtime.hpp"

namespace keylane {

namespace detail {

/// The families `fn` builds, read under `gate`: none once it is closed.
[[nodiscard]] std::shared_ptr<prometheus::Collectable>
gated_collectable(std::shared_ptr<const read_gate> gate,
                  std::function<std::vector<prometheus::MetricFamily>()> fn);

/// The `keylane_*` families the `metrics.listen` endpoint serves, read
/// from `src` now.
[[nodiscard]] std::vector<prometheus::MetricFamily>
runtime_families(const metrics_source& src);

/// A family of one counter sample, `name` ending in `_total`.
[[nodiscard]] prometheus::MetricFamily
counter_family(const std::string& name, const std::string& help, double value);

/// A family of one gauge sample.
[[nodiscard]] prometheus::MetricFamily
gauge_family(const std::string& name, const std::string& help, double value);

/// What a collectable needs of a runtime's insides: its engine, which
/// stays where it is however the runtime object is held, and the gate
/// that engine's `stop` closes.
struct metrics_access {
  template <class Payload, class Result>
  static std::shared_ptr<const read_gate>
  gate(const runtime<Payload, Result>& rt) noexcept {
    return rt.eng_->gate();
  }

  template <class Payload, class Result>
  static metrics_source source(const runtime<Payload, Result>& rt) {
    engine* eng = rt.eng_.get();
    return {[eng] { return eng->snapshot(); },
            [eng] { return eng->parked_keys(); }};
  }
};

} // namespace detail

/// `rt`'s metrics as a prometheus-cpp collectable, for a program that runs
/// its own endpoint: register it beside your registry
/// (`exposer.RegisterCollectable(c)`; the exposer keeps only a weak
/// pointer, so keep `c` as long as it is registered). Each `Collect`
/// reads the runtime at that moment and yields the families
/// `metrics.listen` serves, with the same names (docs/metrics.md); the two
/// may be used together. Once `rt` stops it yields nothing (a collect in
/// progress delays the stop until it ends), so it may outlive `rt`.
///
/// Thread-safety: `Collect` may run on any thread, several at once.
template <class Payload, class Result>
[[nodiscard]] std::shared_ptr<prometheus::Collectable>
metrics_collectable(const runtime<Payload, Result>& rt) {
  // Read only while the gate is open, i.e. while `rt` has not stopped.
  auto src = detail::metrics_access::source(rt);
  return detail::gated_collectable(detail::metrics_access::gate(rt),
                                   [src] {
                                     return detail::runtime_families(src);
                                   });
}

} // namespace keylane
