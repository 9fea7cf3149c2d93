// SPDX-License-Identifier: Apache-2.0
#pragma once

// Fixtures shared by the functional runtime tests: settings, a polling
// wait for published gauges, handlers made of functions or scripted by
// their payload.

#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <caf/all.hpp>

#include "keylane/runtime.hpp"

namespace kl = keylane;
using namespace std::chrono_literals;

namespace runtime_support {

using int_rt = kl::runtime<int, int>;
using str_rt = kl::runtime<std::string, std::string>;
using clk = std::chrono::steady_clock;

inline kl::settings two_threads(std::string handler = "test") {
  kl::settings s;
  s.threads = 2;
  s.handler = std::move(handler);
  // These tests check failures that end as tombstones, the key going on.
  s.park = kl::park_mode::none;
  // The defaults before 0.2.0, which the tests built on this were written
  // for: they are about other things (the defaults' own tests start from
  // settings{}, config_test.cpp).
  s.order = kl::order_mode::global;
  s.max_attempts = 1;
  s.key_backlog = 65536;
  return s;
}

// Polls `done` until it holds or `limit` passes; for published gauges,
// which have no event to wait on.
template <class F>
bool eventually(F done, std::chrono::milliseconds limit = 10s) {
  auto deadline = clk::now() + limit;
  while (!done()) {
    if (clk::now() > deadline)
      return done();
    std::this_thread::sleep_for(1ms);
  }
  return true;
}

template <class Rt, class... Ts>
std::unique_ptr<Rt> start(Ts&&... xs) {
  auto r = Rt::start(std::forward<Ts>(xs)...);
  if (!r)
    FAIL("start failed: " << kl::render(r.error()));
  return std::move(*r);
}

// Runs `fn` at scope exit; declared after the runtime, so it runs first.
struct at_exit {
  std::function<void()> fn;
  ~at_exit() { fn(); }
};

// A handler made of a function, with the protected helpers exposed.
template <class P, class R>
struct fn_handler : kl::handler<P, R> {
  using fn_type = std::function<void(fn_handler&, P&, kl::completion<R>)>;
  explicit fn_handler(fn_type f) : f_(std::move(f)) {}
  void on_event(P& p, kl::completion<R> done) override {
    f_(*this, p, std::move(done));
  }
  using kl::handler_base::current_key;
  using kl::handler_base::run_later;
  using kl::handler_base::self;
  fn_type f_;
};

template <class P, class R>
kl::handler_factory from_fn(typename fn_handler<P, R>::fn_type f) {
  return [f](const kl::handler_params&) {
    return std::make_unique<fn_handler<P, R>>(f);
  };
}

// Acts on its payload: v >= 0 gives ok(10 v); the codes below do the rest.
constexpr int throws = -1, skips = -2, drops = -3, fails = -4, twice = -5;
struct scripted : kl::handler<int, int> {
  void on_event(int& v, kl::completion<int> done) override {
    switch (v) {
      case throws: throw std::runtime_error("boom");
      case skips: done.skip(); break;
      case drops: break;
      case fails: done.fail("refused"); break;
      case twice: done.ok(1); done.ok(2); done.fail("late"); break;
      default: done.ok(v * 10);
    }
  }
};

inline kl::handler_registry scripted_registry() {
  kl::handler_registry reg;
  reg.add<scripted>("test");
  return reg;
}

} // namespace runtime_support
