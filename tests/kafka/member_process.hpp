// SPDX-License-Identifier: Apache-2.0
#pragma once

// A child process running tests/kafka/member.cpp, and a bounded wait.

#include <chrono>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

extern char** environ;

namespace kafka_test {

/// One member process. Killed with SIGKILL by the destructor if still
/// running, so a failing test leaves no process behind.
class member_process {
public:
  member_process(const std::string& exe, const std::string& config,
                 const std::string& log)
    : log_(log) {
    std::vector<std::string> args{exe, config, log};
    std::vector<char*> argv;
    for (auto& a : args)
      argv.push_back(a.data());
    argv.push_back(nullptr);
    if (posix_spawn(&pid_, exe.c_str(), nullptr, nullptr, argv.data(),
                    environ)
        != 0)
      pid_ = -1;
  }

  ~member_process() {
    if (running()) {
      ::kill(pid_, SIGKILL);
      int status;
      ::waitpid(pid_, &status, 0);
    }
  }

  member_process(const member_process&) = delete;
  member_process& operator=(const member_process&) = delete;

  [[nodiscard]] bool started() const noexcept { return pid_ > 0; }
  [[nodiscard]] const std::string& log() const noexcept { return log_; }

  /// Sends `sig` (SIGTERM: leave gracefully; SIGKILL: crash).
  void signal(int sig) {
    if (running())
      ::kill(pid_, sig);
  }

  /// Waits up to `timeout` for the process to end; its exit status, or -1
  /// on timeout, or 128 + signal when a signal ended it.
  int wait(std::chrono::milliseconds timeout) {
    auto until = std::chrono::steady_clock::now() + timeout;
    while (running()) {
      int status;
      auto r = ::waitpid(pid_, &status, WNOHANG);
      if (r == pid_) {
        pid_ = -1;
        status_ = WIFEXITED(status) ? WEXITSTATUS(status)
                                    : 128 + WTERMSIG(status);
        break;
      }
      if (std::chrono::steady_clock::now() > until)
        return -1;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return status_;
  }

private:
  [[nodiscard]] bool running() const noexcept { return pid_ > 0; }
  pid_t pid_ = -1;
  int status_ = -1;
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
