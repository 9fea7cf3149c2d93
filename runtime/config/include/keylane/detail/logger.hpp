// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <atomic>
#include <mutex>
#include <string>
#include <string_view>

#include "keylane/log.hpp"

namespace keylane::detail {

/// A runtime's log: a threshold that `reload` may change and a writer the
/// embedding server may replace. Thread-safe; lines are serialised under a
/// mutex, which is fine because nothing on the per-event path logs: callers
/// test `enabled` (one relaxed load) before building a line.
class logger {
public:
  explicit logger(log_level threshold)
    : threshold_(static_cast<int>(threshold)), writer_(stderr_log_writer()) {}

  /// True if lines of `level` are written.
  [[nodiscard]] bool enabled(log_level level) const noexcept {
    return static_cast<int>(level) <= threshold_.load(std::memory_order_relaxed);
  }

  /// Writes `line` if `level` is enabled. A writer that throws loses the
  /// line, not the runtime.
  void write(log_level level, std::string_view line) noexcept {
    if (!enabled(level))
      return;
    std::lock_guard<std::mutex> guard{mtx_};
    try {
      writer_(level, line);
    } catch (...) {
      // Nowhere left to report it.
    }
  }

  /// Changes the threshold.
  void threshold(log_level level) noexcept {
    threshold_.store(static_cast<int>(level), std::memory_order_relaxed);
  }

  /// Replaces the writer; an empty one restores the default.
  void redirect(log_writer w) {
    std::lock_guard<std::mutex> guard{mtx_};
    writer_ = w ? std::move(w) : stderr_log_writer();
  }

private:
  std::atomic<int> threshold_;
  std::mutex mtx_;
  log_writer writer_;
};

} // namespace keylane::detail
