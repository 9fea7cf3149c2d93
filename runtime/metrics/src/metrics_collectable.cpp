// SPDX-License-Identifier: Apache-2.0
// The collectables of keylane/metrics.hpp, for a host's own Prometheus
// endpoint.
#include <memory>
#include <utility>
#include <vector>

#include "keylane/metrics.hpp"

namespace keylane::detail {

namespace {

class gated final : public prometheus::Collectable {
public:
  gated(std::shared_ptr<const read_gate> gate,
        std::function<std::vector<prometheus::MetricFamily>()> fn)
    : gate_(std::move(gate)), fn_(std::move(fn)) {}

  std::vector<prometheus::MetricFamily> Collect() const override {
    std::vector<prometheus::MetricFamily> out;
    gate_->read([&] { out = fn_(); });
    return out;
  }

private:
  std::shared_ptr<const read_gate> gate_;
  std::function<std::vector<prometheus::MetricFamily>()> fn_;
};

} // namespace

std::shared_ptr<prometheus::Collectable>
gated_collectable(std::shared_ptr<const read_gate> gate,
                  std::function<std::vector<prometheus::MetricFamily>()> fn) {
  return std::make_shared<gated>(std::move(gate), std::move(fn));
}

} // namespace keylane::detail
