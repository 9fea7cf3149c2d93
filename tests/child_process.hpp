// SPDX-License-Identifier: Apache-2.0
#pragma once

// Child processes for the tests that kill one (the kill -9 drills, the
// Kafka members) or need one of their own (another user, a second writer),
// and the pipe on which a child reports its progress.

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

#include <sys/types.h>
#include <unistd.h>

namespace test_support {

/// A running program, started with posix_spawn. Not fork alone: the test
/// process has threads (Catch's watchdog, the runtimes', RocksDB's), and a
/// forked copy keeps only the calling one, so until it execs the child may
/// make only async-signal-safe calls (a lock another thread held at the
/// fork, such as the allocator's, stays held for good). posix_spawn execs
/// at once and takes the child's environment as an argument, so nothing
/// runs in between and the parent's environment is never changed.
///
/// Killed with SIGKILL and reaped by the destructor if still running, so a
/// failing test leaves no process behind. One thread uses it.
class child_process {
public:
  /// Runs `exe` with `args` after argv[0], in this process's environment.
  child_process(const std::string& exe, const std::vector<std::string>& args);

  /// Runs this test binary again on the hidden test case `test_spec` (a
  /// Catch tag such as "[.park_crash_child]"), with `env_name=env_value`
  /// added to its environment and its stdout (Catch's report) on
  /// /dev/null. `close_in_child`: descriptors the child must not inherit,
  /// such as the parent's ends of its pipes (a child holding a pipe's
  /// write end keeps the parent from ever seeing EOF).
  [[nodiscard]] static child_process
  test_case(const std::string& test_spec, const std::string& env_name,
            const std::string& env_value,
            const std::vector<int>& close_in_child);

  child_process(child_process&& other) noexcept;
  child_process& operator=(child_process&&) = delete;
  child_process(const child_process&) = delete;
  child_process& operator=(const child_process&) = delete;
  ~child_process();

  /// Whether the program started (false: posix_spawn or its exec failed).
  [[nodiscard]] bool started() const noexcept { return pid_ > 0; }

  /// Sends `sig` if the child still runs.
  void signal(int sig) noexcept;

  /// Waits for the child to end; its wait status (as waitpid gives it).
  [[nodiscard]] int wait();

  /// Waits up to `timeout` for the child to end: its exit status, 128 +
  /// the signal that ended it, or -1 on timeout.
  [[nodiscard]] int wait_for(std::chrono::milliseconds timeout);

  /// The end of a kill drill: SIGKILL, reap, and require that the kill
  /// ended the child; a child that exited first tested nothing (its exit
  /// code is reported: each drill's child exits with its own codes).
  void kill_and_reap();

private:
  child_process(const std::string& exe, const std::vector<std::string>& argv,
                const std::vector<std::string>* env,
                const std::vector<int>& close_in_child, bool quiet);

  bool running() const noexcept { return pid_ > 0 && !reaped_; }
  void reaped(int status) noexcept;

  pid_t pid_ = -1;
  bool reaped_ = false;
  int status_ = -1; // the wait status, once reaped
};

/// In a hidden test case that child_process::test_case runs: reads the
/// space-separated fields of the variable `env_name` into `fields`. False
/// when it is unset: the case was run some other way and does nothing. A
/// malformed value ends the child with exit code 2 (no Catch assertion: its
/// report goes to /dev/null), which the parent's kill_and_reap reports.
template <class... Fields>
bool child_spec(const char* env_name, Fields&... fields) {
  const char* spec = std::getenv(env_name);
  if (spec == nullptr)
    return false;
  std::istringstream in{spec};
  (in >> ... >> fields);
  if (!in)
    _exit(2);
  return true;
}

/// A pipe, both ends closed at scope exit unless closed before. A child
/// reports on it in fixed-size records, each one write(2) of less than
/// PIPE_BUF bytes, so the reader never sees half of one.
class child_pipe {
public:
  child_pipe(); ///< REQUIREs that the pipe opened.
  ~child_pipe();
  child_pipe(const child_pipe&) = delete;
  child_pipe& operator=(const child_pipe&) = delete;

  [[nodiscard]] int read_fd() const noexcept { return fds_[0]; }
  [[nodiscard]] int write_fd() const noexcept { return fds_[1]; }
  void close_read() noexcept;
  void close_write() noexcept;

  /// Waits up to `timeout_ms` for bytes, reads what is there and passes
  /// each whole `Record` to `f`; false on EOF, error or timeout.
  template <class Record, class F>
  bool read_records(int timeout_ms, F&& f) {
    static_assert(std::is_trivially_copyable<Record>::value,
                  "a record crosses the pipe as its bytes");
    if (!read_some(timeout_ms))
      return false;
    size_t used = 0;
    for (; buf_.size() - used >= sizeof(Record); used += sizeof(Record)) {
      Record r;
      std::memcpy(&r, buf_.data() + used, sizeof(r));
      f(r);
    }
    buf_.erase(0, used);
    return true;
  }

private:
  bool read_some(int timeout_ms);

  int fds_[2] = {-1, -1};
  std::string buf_; // bytes of a record not yet whole
};

} // namespace test_support
