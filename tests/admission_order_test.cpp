// SPDX-License-Identifier: Apache-2.0
// Admission order: keys waiting for a lane slot get it in the order they
// began to wait (their oldest event first), so global output does not wait
// behind younger keys.

#include <catch2/catch.hpp>

#include <algorithm>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "runtime_support.hpp"

using namespace runtime_support;

TEST_CASE("keys waiting for a slot start oldest event first, whatever ingress "
          "queue carried them",
          "[cap][order]") {
  // One slot, held by key "first" until the test releases it; meanwhile
  // 200 keys (spread over ingress's per-shard queues) wait. They must then
  // start in submission order.
  std::mutex mtx;
  std::vector<int> started;
  std::shared_ptr<kl::completion<int>> held;
  auto make = from_fn<int, int>([&](auto&, int& v, kl::completion<int> done) {
    std::lock_guard<std::mutex> guard{mtx};
    started.push_back(v);
    if (v < 0) {
      held = std::make_shared<kl::completion<int>>(std::move(done));
      return;
    }
    done.ok(v);
  });
  auto s = two_threads();
  s.max_active_keys = 1;
  s.order = kl::order_mode::none;
  auto rt = start<int_rt>(s, make, [](int_rt::event_type&) {});
  REQUIRE(rt->submit("first", -1).ok());
  REQUIRE(eventually([&] {
    std::lock_guard<std::mutex> guard{mtx};
    return held != nullptr;
  }));
  for (int i = 0; i < 200; ++i)
    REQUIRE(rt->submit("k" + std::to_string(i), i).ok());
  REQUIRE(eventually([&] {
    auto st = rt->stats();
    return st.ingress_depth == 0 && st.waiting_keys == 200;
  }));
  {
    std::lock_guard<std::mutex> guard{mtx};
    held->ok(0);
    held.reset();
  }
  REQUIRE(rt->drain(30s));
  std::lock_guard<std::mutex> guard{mtx};
  REQUIRE(started.size() == 201);
  CHECK(std::is_sorted(started.begin() + 1, started.end()));
}
