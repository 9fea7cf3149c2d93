// SPDX-License-Identifier: Apache-2.0
#pragma once

// How the example programs take SIGHUP, SIGINT and SIGTERM: blocked in
// every thread and received by one thread with sigwait, so what they do
// (reload a config file, stop a runtime) runs as ordinary code rather than
// in an async-signal handler, where almost nothing is allowed.

#include <condition_variable>
#include <functional>
#include <mutex>
#include <thread>

namespace keylane::cli {

/// Blocks SIGHUP, SIGINT and SIGTERM in the calling thread and so in every
/// thread it starts later. Call it first thing in `main`, before anything
/// starts a thread (a keylane runtime starts CAF's at once): a thread that
/// does not block them could take one and die of it. A signal the program
/// inherited as ignored (`nohup` ignores SIGHUP, `cmd &` in a script
/// SIGINT) is left ignored.
void block_control_signals();

/// Receives the signals `block_control_signals` blocked, on a thread of its
/// own. SIGHUP calls `on_reload` there. SIGINT and SIGTERM end the program
/// as if nothing handled them (killed by that signal) until `serve` is
/// called; from then on they make `serve` return.
///
/// Thread-safety: `on_reload` runs on the signal thread, one call at a
/// time, possibly while the owner runs its workload, so it must take care
/// of what it shares. `serve` is called by the owner, at most once.
class control_signals {
public:
  /// Starts the signal thread.
  explicit control_signals(std::function<void()> on_reload);

  control_signals(const control_signals&) = delete;
  control_signals& operator=(const control_signals&) = delete;

  /// Ends the signal thread (after a reload in progress finished).
  ~control_signals();

  /// Waits for SIGINT or SIGTERM and returns its number.
  [[nodiscard]] int serve();

private:
  void run();

  std::function<void()> on_reload_;
  std::mutex mtx_;
  std::condition_variable cv_;
  bool serving_ = false;
  bool quitting_ = false;
  int stop_signal_ = 0;
  std::thread thread_;
};

/// "SIGHUP", "SIGINT" or "SIGTERM" for one of the three, else "signal N".
[[nodiscard]] const char* signal_name(int signo);

} // namespace keylane::cli
