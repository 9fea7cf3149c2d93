// SPDX-License-Identifier: Apache-2.0
// A submit from the runtime's own threads never waits, even with
// overflow = "block": the credit it would wait for comes back only through
// the thread that would be waiting.

#include "runtime_support.hpp"

#include <cstdio>
#include <cstdlib>
#include <future>

using namespace runtime_support;

namespace {

constexpr auto hang_limit = 20s; // far above the milliseconds this takes

kl::settings blocking_window(size_t window) {
  auto s = two_threads();
  s.window = window;
  s.overflow = kl::overflow_policy::block;
  return s;
}

// Runs `body` on a thread and ends the test binary with a message if it
// has not returned by `hang_limit`: the bug this file guards against is a
// wait without end, which no exception could unwind.
template <class F>
void without_hanging(F body) {
  auto done = std::async(std::launch::async, body);
  if (done.wait_for(hang_limit) != std::future_status::ready) {
    std::fprintf(stderr,
                 "FAILED: a submit from a keylane thread waited for more "
                 "than %d s: it blocks on credit only it can return\n",
                 static_cast<int>(hang_limit.count()));
    std::fflush(stderr);
    std::_Exit(1);
  }
  done.get();
}

} // namespace

TEST_CASE("a blocking submit from the output callback returns window_full instead of waiting",
          "[runtime][window][reentrant]") {
  std::atomic<int_rt*> self{nullptr};
  std::mutex mtx;
  std::vector<kl::errc> answers;
  std::atomic<int> outputs{0};
  // The handler holds the first two completions until both events are in,
  // so the window is full when the first output reaches the callback.
  std::mutex held_mtx;
  std::vector<kl::completion<int>> held;
  auto make = from_fn<int, int>([&](auto&, int& v, kl::completion<int> done) {
    if (v >= 100) {
      done.ok(v);
      return;
    }
    std::lock_guard<std::mutex> guard{held_mtx};
    held.push_back(std::move(done));
  });
  auto rt = start<int_rt>(
    blocking_window(2), make, [&](int_rt::event_type& e) {
      if (e.payload < 100) {
        // The window holds both events still (credit returns after the
        // callback), so this submit finds it full.
        auto r = self.load()->submit("again", 100 + e.payload);
        std::lock_guard<std::mutex> guard{mtx};
        answers.push_back(r ? kl::errc::none : r.code());
      }
      ++outputs;
    });
  self = rt.get();
  without_hanging([&] {
    REQUIRE(rt->submit("a", 1));
    REQUIRE(rt->submit("b", 2));
    REQUIRE(eventually([&] {
      std::lock_guard<std::mutex> guard{held_mtx};
      return held.size() == 2;
    }));
    {
      std::lock_guard<std::mutex> guard{held_mtx};
      for (auto& d : held)
        d.ok(0);
    }
    REQUIRE(rt->drain(hang_limit));
  });
  std::lock_guard<std::mutex> guard{mtx};
  REQUIRE(answers.size() == 2);
  // The first output's submit surely met a full window; the second may
  // have found room once the first batch's credit was back.
  CHECK(answers.front() == kl::errc::window_full);
  auto accepted = std::count(answers.begin(), answers.end(), kl::errc::none);
  CHECK(outputs.load() == 2 + accepted);
  CHECK(rt->stats().accepted == uint64_t(2 + accepted));
}

TEST_CASE("a blocking submit from inside a handler returns window_full instead of waiting",
          "[runtime][window][reentrant]") {
  std::atomic<int_rt*> self{nullptr};
  std::atomic<int> answer{-1};
  auto make = from_fn<int, int>([&](auto&, int& v, kl::completion<int> done) {
    if (v == 1) {
      auto r = self.load()->submit("other", 3);
      answer = static_cast<int>(r ? kl::errc::none : r.code());
    }
    done.ok(v);
  });
  auto rt = start<int_rt>(blocking_window(2), make);
  self = rt.get();
  without_hanging([&] {
    // Both events hold the window until the test pulls them, and it pulls
    // only after the handler of the second tried its submit (the first may
    // be delivered before the second runs).
    REQUIRE(rt->submit("k", 2));
    REQUIRE(rt->submit("k", 1));
    REQUIRE(eventually([&] { return answer.load() != -1; }));
    std::unique_ptr<int_rt::event_type> ev;
    REQUIRE(rt->pull(ev, hang_limit));
    REQUIRE(rt->pull(ev, hang_limit));
    CHECK(ev->payload == 1);
  });
  CHECK(answer.load() == static_cast<int>(kl::errc::window_full));
  std::unique_ptr<int_rt::event_type> ev;
  CHECK_FALSE(rt->try_pull(ev));
}

TEST_CASE("a blocking submit from a handler finds a full key backlog and returns key_backlog_full",
          "[runtime][backlog][reentrant]") {
  std::atomic<int_rt*> self{nullptr};
  std::atomic<int> answer{-1};
  auto make = from_fn<int, int>([&](auto&, int& v, kl::completion<int> done) {
    if (v == 1) {
      // Its own key: this very event holds the key's only backlog slot.
      auto r = self.load()->submit("k", 9);
      answer = static_cast<int>(r ? kl::errc::none : r.code());
    }
    done.ok(v);
  });
  auto s = blocking_window(64);
  s.key_backlog = 1;
  auto rt = start<int_rt>(s, make);
  self = rt.get();
  without_hanging([&] {
    REQUIRE(rt->submit("k", 1));
    std::unique_ptr<int_rt::event_type> ev;
    REQUIRE(rt->pull(ev, hang_limit));
  });
  CHECK(answer.load() == static_cast<int>(kl::errc::key_backlog_full));
}

TEST_CASE("a blocking submit from an application thread still waits for credit",
          "[runtime][window][reentrant]") {
  // A window of one and a producer faster than the puller: most submits
  // meet a full window, and every one must wait rather than be refused.
  auto rt = start<int_rt>(blocking_window(1), scripted_registry());
  constexpr int n = 200;
  std::atomic<int> accepted{0};
  std::thread producer{[&] {
    for (int i = 0; i < n; ++i)
      if (rt->submit("k" + std::to_string(i % 5), i))
        ++accepted;
  }};
  std::unique_ptr<int_rt::event_type> ev;
  int pulled = 0;
  while (pulled < n && rt->pull(ev, 10s))
    ++pulled;
  producer.join();
  CHECK(pulled == n);
  CHECK(accepted.load() == n);
  CHECK(rt->stats().rejected == 0);
}
