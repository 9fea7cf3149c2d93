// SPDX-License-Identifier: Apache-2.0
// metrics.threads: the endpoint starts that many request threads, and a
// value filled in code outside 1 to 1024 fails the start, naming the key.

#include <catch2/catch.hpp>

#include <string>

#include "http_support.hpp"
#include "runtime_support.hpp"
#include "thread_names.hpp"

using namespace runtime_support;
using thread_names::threads_named;

namespace {

kl::handler_factory echo() {
  return from_fn<int, int>(
    [](auto&, int& v, kl::completion<int> done) { done.ok(v); });
}

} // namespace

TEST_CASE("the metrics endpoint starts metrics.threads request threads",
          "[metrics][threads]") {
  for (size_t n : {size_t{3}, size_t{7}}) {
    auto s = two_threads();
    s.metrics_threads = n;
    auto port = http_support::free_port();
    s.metrics_listen = "127.0.0.1:" + std::to_string(port);
    auto rt = int_rt::start(s, echo());
    REQUIRE(rt);
    // Civetweb creates its threads before start returns, and each names
    // itself once it runs; a scrape later they are all named, and a count
    // on its way to the default 16 would not stay at n.
    auto workers = [n] { return threads_named("civetweb-worker") == int(n); };
    CHECK(eventually(workers));
    CHECK(http_support::get(port).status == 200);
    CHECK(threads_named("civetweb-worker") == int(n));
    (*rt)->stop();
    CHECK(threads_named("civetweb-worker") == 0);
  }
}

TEST_CASE("metrics.threads filled in code as 0 or beyond 1024 fails the "
          "start, naming the key",
          "[metrics][threads]") {
  for (size_t bad : {size_t{0}, size_t{1025}}) {
    auto s = two_threads();
    s.metrics_threads = bad;
    s.metrics_listen =
      "127.0.0.1:" + std::to_string(http_support::free_port());
    auto rt = int_rt::start(s, echo());
    REQUIRE_FALSE(rt);
    CHECK(rt.error().code() == static_cast<uint8_t>(kl::errc::invalid_config));
    CHECK(kl::render(rt.error())
          == "invalid_config: metrics.threads = " + std::to_string(bad)
               + ": must be between 1 and 1024");
  }
}

TEST_CASE("the metrics endpoint starts 16 request threads by default",
          "[metrics][threads][defaults]") {
  auto s = two_threads();
  REQUIRE(s.metrics_threads == kl::settings{}.metrics_threads);
  auto port = http_support::free_port();
  s.metrics_listen = "127.0.0.1:" + std::to_string(port);
  auto rt = int_rt::start(s, echo());
  REQUIRE(rt);
  CHECK(eventually([] { return threads_named("civetweb-worker") == 16; }));
  CHECK(http_support::get(port).status == 200);
  (*rt)->stop();
  CHECK(threads_named("civetweb-worker") == 0);
}
