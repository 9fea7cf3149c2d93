// SPDX-License-Identifier: Apache-2.0
// The lock the backlog's stripes and the waiting keys' list take on every
// key activation: one holder at a time under contention from more threads
// than cores, and a waiter still gets it when the holder is off its core
// for long (the spinning gives way to yielding).
#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <mutex>
#include <thread>
#include <vector>

#include <keylane/detail/spin_mutex.hpp>

using keylane::detail::spin_mutex;

TEST_CASE("a spin_mutex lets one thread in at a time", "[unit][locks]") {
  spin_mutex m;
  size_t counter = 0; // plain: a second holder would lose increments
  std::atomic<int> inside{0};
  std::atomic<int> most_inside{0};
  constexpr int threads = 6; // more than the cores CI has
  constexpr int rounds = 20000;
  std::vector<std::thread> ts;
  for (int t = 0; t < threads; ++t)
    ts.emplace_back([&] {
      for (int i = 0; i < rounds; ++i) {
        std::lock_guard<spin_mutex> guard{m};
        auto now = inside.fetch_add(1) + 1;
        auto seen = most_inside.load();
        while (now > seen && !most_inside.compare_exchange_weak(seen, now)) {
        }
        ++counter;
        inside.fetch_sub(1);
      }
    });
  for (auto& t : ts)
    t.join();
  CHECK(most_inside.load() == 1);
  CHECK(counter == size_t{threads} * rounds);
}

TEST_CASE("a spin_mutex waiter gets the lock after a long hold",
          "[unit][locks]") {
  spin_mutex m;
  std::atomic<bool> released{false};
  std::atomic<bool> got{false};
  m.lock();
  std::thread waiter{[&] {
    std::lock_guard<spin_mutex> guard{m};
    // The lock is only free once the holder said so.
    got = released.load();
  }};
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  released = true;
  m.unlock();
  waiter.join();
  CHECK(got.load());
}
