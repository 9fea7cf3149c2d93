// SPDX-License-Identifier: Apache-2.0
// The Prometheus endpoint of metrics.listen, scraped over real HTTP on
// loopback: the metric names and types users' dashboards rely on, values
// that follow the events, the parked gauges, the histogram's shape, and
// clean failures for a port in use or an address that is not ours.

#include <catch2/catch.hpp>

#include <atomic>
#include <cmath>
#include <string>
#include <vector>

#include <keylane/detail/metrics_endpoint.hpp>

#include "http_support.hpp"
#include "prom_text.hpp"
#include "runtime_support.hpp"

using namespace runtime_support;

namespace {

// Ok for v >= 0 except multiples of 5, which it skips; fails for good for
// v < 0, so the key parks.
kl::handler_factory judging() {
  return from_fn<int, int>([](auto&, int& v, kl::completion<int> done) {
    if (v < 0)
      done.fail_permanently("refused");
    else if (v % 5 == 0)
      done.skip();
    else
      done.ok(v);
  });
}

// Outputs are consumed and dropped (drain waits for delivery).
void ignore(int_rt::event_type&) {}

std::string loopback(uint16_t port) {
  return "127.0.0.1:" + std::to_string(port);
}

struct metered {
  std::unique_ptr<int_rt> rt;
  uint16_t port = 0;
};

// Starts a runtime whose endpoint listens on a free loopback port; tries
// another port if someone took the one found meanwhile.
metered start_metered(kl::settings s) {
  for (int attempt = 0; attempt < 5; ++attempt) {
    auto port = http_support::free_port();
    REQUIRE(port != 0);
    s.metrics_listen = loopback(port);
    auto r = int_rt::start(s, judging(), ignore);
    if (r)
      return {std::move(*r), port};
    auto why = kl::render(r.error());
    if (why.find("in use") == std::string::npos)
      FAIL("start failed: " << why);
  }
  FAIL("no free port in 5 tries");
  return {};
}

prom_text::exposition scrape(uint16_t port) {
  auto r = http_support::get(port);
  INFO(r.error);
  REQUIRE(r.status == 200);
  auto e = prom_text::parse(r.body);
  INFO(r.body);
  REQUIRE(e.malformed.empty());
  return e;
}

// The names and types promised in docs/metrics.md.
const std::vector<std::pair<std::string, std::string>> contract{
  {"keylane_accepted_total", "counter"},
  {"keylane_delivered_total", "counter"},
  {"keylane_rejected_total", "counter"},
  {"keylane_events_total", "counter"},
  {"keylane_retries_total", "counter"},
  {"keylane_replayed_total", "counter"},
  {"keylane_ingress_depth", "gauge"},
  {"keylane_active_lanes", "gauge"},
  {"keylane_peak_active_lanes", "gauge"},
  {"keylane_waiting_keys", "gauge"},
  {"keylane_lane_spawns_total", "counter"},
  {"keylane_lane_retires_total", "counter"},
  {"keylane_lane_moves_total", "counter"},
  {"keylane_sink_buffered", "gauge"},
  {"keylane_peak_sink_buffered", "gauge"},
  {"keylane_awaited_seq", "gauge"},
  {"keylane_window", "gauge"},
  {"keylane_spilled_total", "counter"},
  {"keylane_spill_held", "gauge"},
  {"keylane_spill_bytes", "gauge"},
  {"keylane_spill_write_failures_total", "counter"},
  {"keylane_awaited_age_seconds", "gauge"},
  {"keylane_latency_seconds", "histogram"},
  {"keylane_parked_keys", "gauge"},
  {"keylane_parked_events", "gauge"},
  {"keylane_park_write_failures_total", "counter"},
  {"keylane_state_loads_total", "counter"},
  {"keylane_state_load_failures_total", "counter"},
  {"keylane_state_load_seconds", "histogram"},
  {"keylane_state_writes_total", "counter"},
  {"keylane_state_write_bytes_total", "counter"},
  {"keylane_state_checkpoints_total", "counter"},
  {"keylane_state_write_failures_total", "counter"},
  {"keylane_state_pending", "gauge"},
  {"keylane_state_checkpoint_age_seconds", "gauge"},
  {"keylane_messages_sent_total", "counter"},
  {"keylane_messages_refused_total", "counter"},
  {"keylane_messages_in_flight", "gauge"},
  {"keylane_asks_total", "counter"},
  {"keylane_ask_timeouts_total", "counter"},
  {"keylane_timers_pending", "gauge"},
  {"keylane_timers_fired_total", "counter"},
  {"keylane_timers_cancelled_total", "counter"},
};

std::string outcome(const char* name) {
  return std::string{"keylane_events_total{outcome=\""} + name + "\"}";
}

} // namespace

TEST_CASE("the metrics endpoint serves every promised metric with its type "
          "and help, and its values follow the events",
          "[metrics]") {
  auto s = two_threads();
  s.max_active_keys = 4;
  auto m = start_metered(s);
  auto before = scrape(m.port);
  for (auto& [name, type] : contract) {
    INFO(name);
    CHECK(before.types[name] == type);
    CHECK_FALSE(before.help[name].empty());
  }
  CHECK(before.at("keylane_accepted_total") == 0);
  CHECK(before.at(outcome("ok")) == 0);
  CHECK(before.at("keylane_latency_seconds_count") == 0);
  CHECK(before.at("keylane_lane_spawns_total") == 0);
  CHECK(before.at("keylane_window") == static_cast<double>(s.window));
  CHECK(before.at("keylane_spilled_total") == 0);
  CHECK(before.at("keylane_spill_held") == 0);

  constexpr int n = 200;
  for (int i = 1; i <= n; ++i)
    REQUIRE(m.rt->submit("k" + std::to_string(i % 10), i).ok());
  REQUIRE(m.rt->drain(60s));
  auto after = scrape(m.port);
  CHECK(after.at("keylane_accepted_total") == n);
  CHECK(after.at("keylane_delivered_total") == n);
  CHECK(after.at(outcome("ok")) == n - n / 5);
  CHECK(after.at(outcome("skipped")) == n / 5);
  CHECK(after.at(outcome("failed")) == 0);
  CHECK(after.at(outcome("parked")) == 0);
  CHECK(after.at("keylane_rejected_total") == 0);
  CHECK(after.at("keylane_ingress_depth") == 0);
  CHECK(after.at("keylane_waiting_keys") == 0);
  CHECK(after.at("keylane_lane_spawns_total") >= 1);
  CHECK(after.at("keylane_peak_active_lanes") >= 1);
  CHECK(after.at("keylane_peak_active_lanes") <= s.max_active_keys);
  CHECK(after.at("keylane_sink_buffered") == 0);
  CHECK(after.at("keylane_awaited_age_seconds") == 0);
  CHECK(after.at("keylane_parked_keys") == 0);
  CHECK(after.at("keylane_parked_events") == 0);
  CHECK(after.at("keylane_latency_seconds_count") == n);
  CHECK(after.at("keylane_latency_seconds_bucket{le=\"+Inf\"}") == n);
  CHECK(after.at("keylane_latency_seconds_sum") > 0);

  // Closed by stop: nothing answers afterwards.
  m.rt->stop();
  auto gone = http_support::get(m.port);
  CHECK(gone.status == 0);
  CHECK(gone.error.find("connect") != std::string::npos);
}

TEST_CASE("stop closes the endpoint promptly, and a scraper stalled in "
          "the middle of a request holds it up for at most civetweb's 2 s "
          "poll",
          "[metrics][stop]") {
  auto m = start_metered(two_threads());
  REQUIRE(http_support::get(m.port).status == 200);
  SECTION("with no request in progress, well under civetweb's 2 s poll") {
    auto t0 = clk::now();
    m.rt->stop();
    CHECK(clk::now() - t0 < 1s);
  }
  SECTION("with server threads held by stalled clients, not their "
          "request timeout") {
    http_support::stalled_client idle{m.port, ""};
    http_support::stalled_client partial{m.port,
                                         "GET /metrics HTTP/1.0\r\n"};
    REQUIRE(idle.connected);
    REQUIRE(partial.connected);
    auto t0 = clk::now();
    m.rt->stop();
    CHECK(clk::now() - t0 < 10s);
  }
  CHECK(http_support::get(m.port).status == 0);
}

TEST_CASE("a key that fails for good moves the parked gauges, and "
          "discarding it moves them back",
          "[metrics][parking]") {
  auto s = two_threads();
  s.park = kl::park_mode::memory;
  auto m = start_metered(s);
  REQUIRE(m.rt->submit("bad", -1).ok());
  for (int i = 1; i <= 4; ++i) {
    REQUIRE(m.rt->submit("bad", i).ok()); // parked behind
    REQUIRE(m.rt->submit("good", i).ok());
  }
  REQUIRE(m.rt->drain(60s));
  auto parked = scrape(m.port);
  CHECK(parked.at("keylane_parked_keys") == 1);
  CHECK(parked.at("keylane_parked_events") == 5);
  CHECK(parked.at(outcome("parked")) == 5);
  CHECK(parked.at(outcome("ok")) == 4);

  auto dropped = m.rt->discard("bad");
  REQUIRE(dropped);
  CHECK(*dropped == 5);
  auto cleared = scrape(m.port);
  CHECK(cleared.at("keylane_parked_keys") == 0);
  CHECK(cleared.at("keylane_parked_events") == 0);
  CHECK(cleared.at(outcome("parked")) == 5); // a counter: it stays
}

TEST_CASE("a second runtime on a port in use fails to start, naming the "
          "address, and the first one keeps serving",
          "[metrics][errors]") {
  auto m = start_metered(two_threads());
  auto s = two_threads();
  s.metrics_listen = loopback(m.port);
  auto second = int_rt::start(s, judging(), ignore);
  REQUIRE_FALSE(second);
  CHECK(second.error().code()
        == static_cast<uint8_t>(kl::errc::startup_failed));
  auto why = kl::render(second.error());
  INFO(why);
  CHECK(why.find("metrics.listen = \"" + loopback(m.port)
                 + "\": cannot listen") != std::string::npos);
  CHECK(why.find("Address already in use") != std::string::npos);
  CHECK(scrape(m.port).has("keylane_accepted_total"));
}

TEST_CASE("an address that is not this machine's, or a host that does not "
          "resolve, fails the start with a message naming it",
          "[metrics][errors]") {
  auto s = two_threads();
  // TEST-NET-1 (RFC 5737): never an address of this machine.
  s.metrics_listen = "192.0.2.1:9464";
  auto foreign = int_rt::start(s, judging(), ignore);
  REQUIRE_FALSE(foreign);
  CHECK(foreign.error().code()
        == static_cast<uint8_t>(kl::errc::startup_failed));
  CHECK_THAT(kl::render(foreign.error()),
             Catch::Contains("metrics.listen = \"192.0.2.1:9464\": cannot "
                             "listen: cannot bind to 192.0.2.1:9464"));
  // .invalid never resolves (RFC 6761).
  s.metrics_listen = "no-such-host.invalid:9464";
  auto unknown = int_rt::start(s, judging(), ignore);
  REQUIRE_FALSE(unknown);
  CHECK_THAT(kl::render(unknown.error()),
             Catch::Contains("cannot resolve \"no-such-host.invalid\""));
}

TEST_CASE("with metrics.listen empty the runtime opens no listening socket",
          "[metrics]") {
  auto base = http_support::listening_sockets();
  {
    auto rt = start<int_rt>(two_threads(), judging(), ignore);
    CHECK(http_support::listening_sockets() == base);
  }
  // The count sees an endpoint when there is one, and its end.
  {
    auto m = start_metered(two_threads());
    CHECK(http_support::listening_sockets() == base + 1);
  }
  CHECK(http_support::listening_sockets() == base);
}

TEST_CASE("the endpoint reads its source only when scraped, and a park "
          "store that fails leaves out the parked gauges but not the rest",
          "[metrics]") {
  std::atomic<int> reads{0};
  kl::detail::metrics_source src{
    [&] {
      ++reads;
      kl::stats st;
      st.accepted = 7;
      return st;
    },
    []() -> caf::expected<std::vector<kl::parked_key>> {
      return kl::make_error(kl::errc::park_store_failed, "disk on fire");
    }};
  auto ep = kl::detail::metrics_endpoint::open(
    "127.0.0.1:0", kl::settings{}.metrics_threads, src);
  REQUIRE(ep);
  REQUIRE((*ep)->port() != 0);
  CHECK(reads == 0);
  auto e = scrape((*ep)->port());
  CHECK(reads == 1);
  CHECK(e.at("keylane_accepted_total") == 7);
  CHECK_FALSE(e.has("keylane_parked_keys"));
  CHECK_FALSE(e.has("keylane_parked_events"));
}

TEST_CASE("the latency histogram has cumulative buckets in seconds whose "
          "+Inf bucket equals _count, even when the count field lags",
          "[metrics]") {
  kl::stats st;
  auto& h = st.latency;
  h.counts[0] = 1;                // <= 10 us
  h.counts[3] = 2;                // <= 100 us
  h.counts[h.counts.size() - 1] = 1; // beyond the last bound
  h.count = 2; // read before the sink recorded the others
  h.sum = std::chrono::milliseconds(30);
  kl::detail::metrics_source src{
    [&] { return st; },
    [] {
      return caf::expected<std::vector<kl::parked_key>>{
        std::vector<kl::parked_key>{}};
    }};
  auto ep = kl::detail::metrics_endpoint::open(
    "127.0.0.1:0", kl::settings{}.metrics_threads, src);
  REQUIRE(ep);
  auto e = scrape((*ep)->port());
  auto b = e.buckets("keylane_latency_seconds");
  REQUIRE(b.size() == kl::latency_histogram::bounds_us.size() + 1);
  for (size_t i = 0; i + 1 < b.size(); ++i) {
    CHECK(b[i].first
          == Approx(kl::latency_histogram::bounds_us[i] / 1e6));
    CHECK(b[i].second <= b[i + 1].second);
  }
  CHECK(b[0].second == 1);
  CHECK(b[2].second == 1);
  CHECK(b[3].second == 3);
  CHECK(std::isinf(b.back().first));
  CHECK(b.back().second == 4);
  CHECK(e.at("keylane_latency_seconds_count") == 4);
  CHECK(e.at("keylane_latency_seconds_sum") == Approx(0.030));
  CHECK(e.at("keylane_parked_keys") == 0);
}
