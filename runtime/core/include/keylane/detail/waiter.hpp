// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>

namespace keylane::detail {

/// A place where producers (blocked on window credit), `drain` and `stop`
/// wait for a condition that other threads change.
///
/// Thread-safety: any thread may wait or wake. A waker changes the state
/// the condition reads *before* calling `wake`; `wake` passes through the
/// mutex, so a waiter that checked the condition just before it went to
/// sleep cannot miss the notification. `wake_if_waiting` costs one load
/// when nobody waits, which is the common case on the event path.
class waiter {
public:
  /// A deadline about a year away: "no deadline" without overflow.
  [[nodiscard]] static std::chrono::steady_clock::time_point
  after(std::chrono::nanoseconds d);

  /// Waits until `done()` or `deadline`; returns `done()` as last seen.
  bool wait_until(std::chrono::steady_clock::time_point deadline,
                  const std::function<bool()>& done);

  /// Wakes every waiter to check its condition again.
  void wake();

  /// `wake`, only if someone waits.
  void wake_if_waiting() {
    if (waiting())
      wake();
  }

  /// True while a thread waits.
  [[nodiscard]] bool waiting() const noexcept {
    return waiters_.load(std::memory_order_seq_cst) != 0;
  }

private:
  std::mutex mtx_;
  std::condition_variable cv_;
  std::atomic<int> waiters_{0};
};

} // namespace keylane::detail
