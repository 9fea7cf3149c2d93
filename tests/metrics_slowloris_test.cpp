// SPDX-License-Identifier: Apache-2.0
// The metrics endpoint under connections that never finish a request (a
// port scanner, a stuck proxy, a slowloris client): scrapes still come back
// within a second, and a half-sent request is dropped after the endpoint's
// request timeout instead of civetweb's 30 s.

#include <catch2/catch.hpp>

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include <keylane/config.hpp>
#include <keylane/detail/metrics_endpoint.hpp>

#include "http_support.hpp"
#include "prom_text.hpp"

using namespace std::chrono_literals;
using clk = std::chrono::steady_clock;

namespace {

std::unique_ptr<keylane::detail::metrics_endpoint>
open_endpoint(size_t threads) {
  keylane::detail::metrics_source src{
    [] { return keylane::stats{}; },
    []() -> caf::expected<std::vector<keylane::parked_key>> {
      return std::vector<keylane::parked_key>{};
    }};
  auto ep = keylane::detail::metrics_endpoint::open(
    "127.0.0.1:0", threads, src);
  REQUIRE(ep);
  REQUIRE((*ep)->port() != 0);
  return std::move(*ep);
}

// `n` connections that hold the endpoint: even ones sent nothing, odd ones
// the first line and part of a header. `refill` reopens any the server has
// closed, so `n` stay held as a real slowloris client keeps them.
struct held_connections {
  uint16_t port;
  std::vector<std::unique_ptr<http_support::stalled_client>> all;

  held_connections(uint16_t p, size_t n) : port(p), all(n) {
    refill();
  }

  void refill() {
    for (size_t i = 0; i < all.size(); ++i) {
      if (all[i] && !all[i]->dropped())
        continue;
      all[i] = std::make_unique<http_support::stalled_client>(
        port, i % 2 == 0 ? "" : "GET /metrics HTTP/1.1\r\nHost: 127.0");
      REQUIRE(all[i]->connected);
    }
  }
};

} // namespace

// What an endpoint that untrusted peers can reach is set to (the default
// before 0.2.0): 64 held connections leave 16 threads for scrapes.
constexpr size_t exposed_threads = 80;

TEST_CASE("with metrics.threads = 80 a scrape is served within a second "
          "while 64 connections hold the endpoint idle or with half a request",
          "[metrics][slowloris]") {
  auto ep = open_endpoint(exposed_threads);
  held_connections held{ep->port(), 64};
  for (int round = 0; round < 5; ++round) {
    held.refill();
    auto t0 = clk::now();
    // Patience 3 s: long enough to tell "slow" from "hung" in the message,
    // short enough that the old endpoint (about 30 s per held connection
    // per thread) fails quickly.
    auto r = http_support::get(ep->port(), "/metrics", 3);
    auto took = clk::now() - t0;
    INFO("round " << round << ": "
                  << std::chrono::duration_cast<std::chrono::milliseconds>(
                       took)
                       .count()
                  << " ms, error \"" << r.error << "\"");
    REQUIRE(r.status == 200);
    CHECK(prom_text::parse(r.body).malformed.empty());
    CHECK(took < 1s);
  }
}

TEST_CASE("a client that sends half a request is disconnected within a few "
          "seconds, not civetweb's default 30 s",
          "[metrics][slowloris]") {
  auto ep = open_endpoint(exposed_threads);
  http_support::stalled_client idle{ep->port(), ""};
  http_support::stalled_client partial{ep->port(), "GET /metrics HTTP/1.1\r\n"};
  REQUIRE(idle.connected);
  REQUIRE(partial.connected);
  auto t0 = clk::now();
  // Waits on the event (the server's close) with a 10 s limit.
  CHECK(partial.dropped(10'000));
  CHECK(idle.dropped(10'000));
  auto took = std::chrono::duration_cast<std::chrono::milliseconds>(
    clk::now() - t0);
  CHECK(took.count() < 5000);
}

TEST_CASE("with the default metrics.threads a scrape is served within a "
          "second while all but two of its threads are held",
          "[metrics][slowloris][defaults]") {
  size_t threads = keylane::settings{}.metrics_threads;
  REQUIRE(threads == 16);
  auto ep = open_endpoint(threads);
  held_connections held{ep->port(), threads - 2};
  for (int round = 0; round < 3; ++round) {
    held.refill();
    auto t0 = clk::now();
    auto r = http_support::get(ep->port(), "/metrics", 3);
    auto took = clk::now() - t0;
    INFO("round " << round << ": "
                  << std::chrono::duration_cast<std::chrono::milliseconds>(
                       took)
                       .count()
                  << " ms, error \"" << r.error << "\"");
    REQUIRE(r.status == 200);
    CHECK(took < 1s);
  }
}
