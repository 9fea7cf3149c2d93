// SPDX-License-Identifier: Apache-2.0
#pragma once

// A watchdog for tests that wait on the runtime: a stalled run fails in
// seconds with a message naming what it waited for, instead of hanging
// until an outside timeout (or forever, outside CTest).

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

namespace keylane::test {

/// Fails the run with a message when it makes no progress for
/// $KEYLANE_WATCHDOG_S seconds (default 15): a broken invariant that stalls
/// the runtime (a lost event, a gap in the reorder buffer) would otherwise
/// block a producer in `submit` or a `drain` until an outside timeout, with
/// no word on what hung. `progress` is polled from the watchdog's thread
/// (it must be thread-safe); any change counts as progress. The message
/// names the current stage, which the test updates as it goes. Catch's
/// assertions are not thread-safe, so it ends the process (abort) after
/// printing to stderr.
class watchdog {
public:
  watchdog(std::string stage, std::function<uint64_t()> progress,
           std::function<std::string()> status = {})
    : stage_(std::move(stage)), progress_(std::move(progress)),
      status_(std::move(status)), limit_(limit()),
      thread_([this] { watch(); }) {}

  watchdog(const watchdog&) = delete;
  watchdog& operator=(const watchdog&) = delete;

  ~watchdog() {
    { std::lock_guard<std::mutex> guard{mtx_}; done_ = true; }
    cv_.notify_all();
    thread_.join();
  }

  /// Names what the test waits for now.
  void stage(std::string what) {
    std::lock_guard<std::mutex> guard{mtx_};
    stage_ = std::move(what);
  }

  /// $KEYLANE_WATCHDOG_S, or 15 seconds.
  static std::chrono::seconds limit() {
    if (auto* s = std::getenv("KEYLANE_WATCHDOG_S"); s && *s)
      return std::chrono::seconds(std::strtoull(s, nullptr, 10));
    return std::chrono::seconds(15);
  }

private:
  void watch() {
    using clock = std::chrono::steady_clock;
    std::unique_lock<std::mutex> guard{mtx_};
    auto last = progress_();
    auto since = clock::now();
    while (!done_) {
      cv_.wait_for(guard, std::chrono::milliseconds(100));
      if (done_)
        return;
      auto now_progress = progress_();
      if (now_progress != last) {
        last = now_progress;
        since = clock::now();
        continue;
      }
      if (clock::now() - since < limit_)
        continue;
      std::fprintf(stderr,
                   "\nwatchdog: no progress for %lld s while waiting for: %s"
                   "%s%s (progress counter %llu; KEYLANE_WATCHDOG_S sets "
                   "the limit)\n",
                   static_cast<long long>(limit_.count()), stage_.c_str(),
                   status_ ? "; " : "", status_ ? status_().c_str() : "",
                   static_cast<unsigned long long>(now_progress));
      std::fflush(stderr);
      std::abort();
    }
  }

  std::mutex mtx_;
  std::condition_variable cv_;
  bool done_ = false;
  std::string stage_;
  std::function<uint64_t()> progress_;
  std::function<std::string()> status_;
  std::chrono::seconds limit_;
  std::thread thread_;
};

} // namespace keylane::test
