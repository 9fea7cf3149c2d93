// SPDX-License-Identifier: Apache-2.0
// window = "auto": the runtime sizes the admission window from completion
// rate and tail latency, within [2 x cap, window_max], growing while a
// straggler holds output back; output order and accounting are unchanged.

#include <catch2/catch.hpp>

#include <algorithm>
#include <atomic>
#include <memory>
#include <thread>

#include "runtime_support.hpp"

using namespace runtime_support;

namespace {

// Item v takes 200 ms when v % 50 == 7, else 2 ms, completed by a timer.
kl::handler_factory straggling() {
  return from_fn<int, int>([](auto& h, int& v, kl::completion<int> done) {
    auto shared = std::make_shared<kl::completion<int>>(std::move(done));
    auto d = v % 50 == 7 ? 200ms : 2ms;
    h.run_later(d, [shared, v] { shared->ok(v); });
  });
}

struct run_result {
  uint64_t delivered = 0;
  uint64_t order_breaks = 0;
  uint64_t min_window = UINT64_MAX;
  uint64_t max_window = 0;
  uint64_t peak_buffered = 0;
};

run_result run(size_t items, size_t window_max) {
  auto s = two_threads();
  s.order = kl::order_mode::global;
  s.max_active_keys = 8;
  s.window_auto = true;
  s.window_max = window_max;
  run_result r;
  std::atomic<uint64_t> next{0};
  std::atomic<uint64_t> breaks{0};
  auto rt = start<int_rt>(s, straggling(), [&](int_rt::event_type& ev) {
    if (ev.seq != next.load() || ev.status != kl::outcome::ok
        || *ev.result != ev.payload)
      ++breaks;
    next = ev.seq + 1;
  });
  std::atomic<bool> done{false};
  std::thread watcher{[&] {
    while (!done) {
      auto w = rt->stats().window;
      r.min_window = std::min(r.min_window, w);
      r.max_window = std::max(r.max_window, w);
      std::this_thread::sleep_for(1ms);
    }
  }};
  for (size_t i = 0; i < items; ++i)
    REQUIRE(rt->submit(kl::key{uint64_t{i}}, static_cast<int>(i)).ok());
  REQUIRE(rt->drain(60s));
  done = true;
  watcher.join();
  auto st = rt->stats();
  r.delivered = st.delivered;
  r.peak_buffered = st.peak_sink_buffered;
  r.order_breaks = breaks;
  return r;
}

} // namespace

TEST_CASE("the automatic window grows past a straggler and stays within "
          "window_max",
          "[window][auto]") {
  auto r = run(300, 200);
  CHECK(r.delivered == 300);
  CHECK(r.order_breaks == 0);
  CHECK(r.min_window >= 16); // 2 x cap
  CHECK(r.max_window <= 200);
  // 8 lanes finish ~4 items/ms while a 200 ms straggler is out: the window
  // must have grown well beyond its start to keep them busy.
  CHECK(r.max_window > 64);
  CHECK(r.peak_buffered <= 200);
}

TEST_CASE("a small window_max holds the automatic window to it",
          "[window][auto]") {
  auto r = run(150, 24);
  CHECK(r.delivered == 150);
  CHECK(r.order_breaks == 0);
  CHECK(r.max_window <= 24);
  CHECK(r.peak_buffered <= 24);
}

TEST_CASE("switching to the automatic window by reload resizes it, and back",
          "[window][auto][reload]") {
  auto s = two_threads();
  s.window = 1000;
  s.max_active_keys = 4;
  auto rt = start<int_rt>(s, straggling(), [](int_rt::event_type&) {});
  CHECK(rt->stats().window == 1000);
  auto a = rt->config();
  a.window_auto = true;
  a.window_max = 500;
  REQUIRE(rt->reload(a));
  CHECK(rt->stats().window == 8); // starts at 2 x cap
  for (int i = 0; i < 100; ++i)
    REQUIRE(rt->submit(kl::key{uint64_t(i)}, i).ok());
  REQUIRE(rt->drain(30s));
  auto f = rt->config();
  f.window_auto = false;
  f.window = 77;
  REQUIRE(rt->reload(f));
  CHECK(rt->stats().window == 77);
  // No tick of the old controller may resize it afterwards.
  for (int i = 0; i < 50; ++i)
    REQUIRE(rt->submit(kl::key{uint64_t(i)}, i).ok());
  REQUIRE(rt->drain(30s));
  CHECK(rt->stats().window == 77);
}
