// SPDX-License-Identifier: Apache-2.0
#pragma once

// A progress line on a terminal for long runs of the example programs and
// the benchmark: "ledger: 640/1200 events (53%)  1138/s  0.8 s", redrawn in
// place.

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>

namespace keylane::cli {

/// True when progress belongs on stderr: it is a terminal and the program
/// was not asked for `--json` (a pipe or a log file gets no progress).
[[nodiscard]] bool progress_wanted(bool json);

/// Shows "<label>: done/total <unit>  rate/s  elapsed" on stderr, rewritten
/// in place (`\r`) at most four times a second by a thread of its own, and
/// cleared by `finish` or the destructor. A disabled meter draws nothing
/// and starts no thread. Nothing is drawn in the first quarter second, so a
/// short run stays silent.
///
/// Thread-safety: `add` may be called from any threads at once and costs
/// one relaxed atomic add (the drawing thread only reads the counter);
/// `say` and `finish` are called by the owner, one at a time.
class progress {
public:
  /// Starts counting towards `total` (0: unknown, shown without "/total").
  progress(std::string label, uint64_t total, std::string unit, bool enabled);

  progress(const progress&) = delete;
  progress& operator=(const progress&) = delete;

  /// Clears the line.
  ~progress();

  /// Counts `n` more done.
  void add(uint64_t n = 1) noexcept {
    done_.fetch_add(n, std::memory_order_relaxed);
  }

  /// Prints `line` (a complete line, with its newline) on stderr without
  /// tearing the progress line, which is redrawn below it.
  void say(std::string_view line);

  /// Stops drawing and clears the line; later calls do nothing.
  void finish();

private:
  void run();
  void draw(); // with mtx_ held

  std::string label_;
  std::string unit_;
  uint64_t total_;
  bool enabled_;
  std::chrono::steady_clock::time_point t0_;
  std::atomic<uint64_t> done_{0};
  std::mutex mtx_;
  std::condition_variable cv_;
  bool stopping_ = false;
  bool drawn_ = false;
  std::thread thread_;
};

} // namespace keylane::cli
