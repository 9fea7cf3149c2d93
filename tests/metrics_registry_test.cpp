// SPDX-License-Identifier: Apache-2.0
// keylane's metrics in the host's own Prometheus setup
// (keylane/metrics.hpp): collected beside a host registry, serialized with
// prometheus-cpp's TextSerializer, the same families as the
// metrics.listen endpoint, accepted by promtool, and nothing once the
// runtime stopped.

#include <catch2/catch.hpp>

#include <set>
#include <string>
#include <vector>

#include <prometheus/counter.h>
#include <prometheus/registry.h>
#include <prometheus/text_serializer.h>

#include <keylane/metrics.hpp>

#include "http_support.hpp"
#include "prom_text.hpp"
#include "promtool.hpp"
#include "runtime_support.hpp"

using namespace runtime_support;

namespace {

// Ok for v >= 0 except multiples of 5, which it skips.
kl::handler_factory judging() {
  return from_fn<int, int>([](auto&, int& v, kl::completion<int> done) {
    if (v % 5 == 0)
      done.skip();
    else
      done.ok(v);
  });
}

void ignore(int_rt::event_type&) {}

// A runtime with its own endpoint as well, on a free loopback port.
std::unique_ptr<int_rt> start_with_endpoint(uint16_t& port) {
  auto s = two_threads();
  for (int attempt = 0; attempt < 5; ++attempt) {
    port = http_support::free_port();
    REQUIRE(port != 0);
    s.metrics_listen = "127.0.0.1:" + std::to_string(port);
    auto r = int_rt::start(s, judging(), ignore);
    if (r)
      return std::move(*r);
    auto why = kl::render(r.error());
    if (why.find("in use") == std::string::npos)
      FAIL("start failed: " << why);
  }
  FAIL("no free port in 5 tries");
  return nullptr;
}

std::string serialize(const std::vector<prometheus::MetricFamily>& fams) {
  return prometheus::TextSerializer{}.Serialize(fams);
}

std::set<std::string> keylane_families(const prom_text::exposition& e) {
  std::set<std::string> out;
  for (auto& [name, type] : e.types)
    if (name.rfind("keylane_", 0) == 0)
      out.insert(name);
  return out;
}

std::string outcome(const char* name) {
  return std::string{"keylane_events_total{outcome=\""} + name + "\"}";
}

} // namespace

TEST_CASE("a runtime's collectable puts the endpoint's metrics into the "
          "host's registry output, values following the events",
          "[metrics][registry]") {
  prometheus::Registry host;
  auto& orders = prometheus::BuildCounter()
                   .Name("host_orders_total")
                   .Help("The host's own counter.")
                   .Register(host);
  orders.Add({}).Increment(3);

  uint16_t port = 0;
  auto rt = start_with_endpoint(port);
  auto ours = kl::metrics_collectable(*rt);
  constexpr int n = 100;
  for (int i = 1; i <= n; ++i)
    REQUIRE(rt->submit("k" + std::to_string(i % 10), i).ok());
  REQUIRE(rt->drain(60s));

  auto fams = host.Collect();
  for (auto& f : ours->Collect())
    fams.push_back(std::move(f));
  auto text = serialize(fams);
  INFO(text);
  auto e = prom_text::parse(text);
  REQUIRE(e.malformed.empty());
  CHECK(e.at("host_orders_total") == 3);
  CHECK(e.at("keylane_accepted_total") == n);
  CHECK(e.at("keylane_delivered_total") == n);
  CHECK(e.at(outcome("ok")) == n - n / 5);
  CHECK(e.at(outcome("skipped")) == n / 5);
  CHECK(e.at("keylane_latency_seconds_count") == n);
  CHECK(e.types["keylane_latency_seconds"] == "histogram");

  auto check = promtool::check(text);
  INFO(check.output);
  CHECK(check.ok);

  // The endpoint serves the very same families, by the same names.
  auto r = http_support::get(port);
  REQUIRE(r.status == 200);
  auto served = prom_text::parse(r.body);
  CHECK(keylane_families(served) == keylane_families(e));
  CHECK(served.at("keylane_accepted_total") == n);
}

TEST_CASE("a runtime's collectable yields nothing once the runtime stopped, "
          "and may outlive it",
          "[metrics][registry][stop]") {
  std::shared_ptr<prometheus::Collectable> ours;
  {
    auto rt = int_rt::start(two_threads(), judging(), ignore);
    REQUIRE(rt);
    ours = kl::metrics_collectable(**rt);
    REQUIRE_FALSE(ours->Collect().empty());
    (*rt)->stop();
    CHECK(ours->Collect().empty());
  }
  CHECK(ours->Collect().empty());
}
