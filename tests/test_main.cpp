// SPDX-License-Identifier: Apache-2.0
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>

// A bound on every test case, so a hang fails with the test's name also
// when the binary runs outside CTest (whose own timeout says nothing about
// where it hung): $KEYLANE_TEST_TIMEOUT_S seconds (default 300; hidden
// stress and soak cases get four times as long). Tests that wait on the
// runtime have their own, shorter watchdog (property_support.hpp) naming
// what they waited for; this one is the backstop.

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>
#include <thread>

namespace {

class case_timer {
public:
  static case_timer& instance() {
    static case_timer timer;
    return timer;
  }

  void start(const std::string& name, bool long_running) {
    std::lock_guard<std::mutex> guard{mtx_};
    name_ = name;
    auto limit = limit_ * (long_running ? 4 : 1);
    deadline_ = clock::now() + limit;
    limit_now_ = limit;
    running_ = true;
    if (!thread_.joinable())
      thread_ = std::thread{[this] { watch(); }};
    cv_.notify_all();
  }

  void stop() {
    std::lock_guard<std::mutex> guard{mtx_};
    running_ = false;
  }

  ~case_timer() {
    { std::lock_guard<std::mutex> guard{mtx_}; done_ = true; }
    cv_.notify_all();
    if (thread_.joinable())
      thread_.join();
  }

private:
  using clock = std::chrono::steady_clock;

  case_timer() {
    if (auto* s = std::getenv("KEYLANE_TEST_TIMEOUT_S"); s && *s)
      limit_ = std::chrono::seconds(std::strtoull(s, nullptr, 10));
  }

  void watch() {
    std::unique_lock<std::mutex> guard{mtx_};
    while (!done_) {
      cv_.wait_for(guard, std::chrono::milliseconds(200));
      if (running_ && clock::now() > deadline_) {
        std::fprintf(stderr,
                     "\ntest case \"%s\" still running after %lld s "
                     "(KEYLANE_TEST_TIMEOUT_S sets the limit): aborting\n",
                     name_.c_str(),
                     static_cast<long long>(limit_now_.count()));
        std::fflush(stderr);
        std::abort();
      }
    }
  }

  std::mutex mtx_;
  std::condition_variable cv_;
  std::thread thread_;
  std::string name_;
  std::chrono::seconds limit_{300};
  std::chrono::seconds limit_now_{300};
  clock::time_point deadline_{};
  bool running_ = false;
  bool done_ = false;
};

struct case_timer_listener : Catch::TestEventListenerBase {
  using TestEventListenerBase::TestEventListenerBase;

  void testCaseStarting(Catch::TestCaseInfo const& info) override {
    auto tags = info.tagsAsString();
    // "[.stress]" reads "[stress]...[.]" here (Catch splits hidden tags).
    bool long_running = tags.find("[stress]") != std::string::npos
                        || tags.find("[soak]") != std::string::npos;
    case_timer::instance().start(info.name, long_running);
  }

  void testCaseEnded(Catch::TestCaseStats const&) override {
    case_timer::instance().stop();
  }
};

} // namespace

CATCH_REGISTER_LISTENER(case_timer_listener)
