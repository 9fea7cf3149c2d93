// SPDX-License-Identifier: Apache-2.0
#pragma once

// A child process running tests/kafka/member.cpp, and a bounded wait.

#include <chrono>
#include <functional>
#include <string>
#include <thread>

#include <signal.h> // SIGTERM and SIGKILL for signal()

#include "child_process.hpp"

namespace kafka_test {

/// One member process (tests/child_process.hpp: killed with SIGKILL by the
/// destructor if still running), and the log it writes.
class member_process {
public:
  member_process(const std::string& exe, const std::string& config,
                 const std::string& log)
    : child_(exe, {config, log}), log_(log) {}

  [[nodiscard]] bool started() const noexcept { return child_.started(); }
  [[nodiscard]] const std::string& log() const noexcept { return log_; }

  /// Sends `sig` (SIGTERM: leave gracefully; SIGKILL: crash).
  void signal(int sig) noexcept { child_.signal(sig); }

  /// Waits up to `timeout` for the process to end; its exit status, or -1
  /// on timeout, or 128 + signal when a signal ended it.
  int wait(std::chrono::milliseconds timeout) {
    return child_.wait_for(timeout);
  }

private:
  test_support::child_process child_;
  std::string log_;
};

/// Checks `done` every 50 ms until it holds or `timeout` passes; returns
/// whether it held. The condition reads the members' logs, which change as
/// the members work, so this waits on their progress, with a bound.
inline bool wait_until(const std::function<bool()>& done,
                       std::chrono::milliseconds timeout) {
  auto until = std::chrono::steady_clock::now() + timeout;
  while (!done()) {
    if (std::chrono::steady_clock::now() > until)
      return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return true;
}

} // namespace kafka_test
