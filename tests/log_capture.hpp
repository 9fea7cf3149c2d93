// SPDX-License-Identifier: Apache-2.0
#pragma once

// Collects a runtime's log lines (through `set_log_writer`) so tests can
// wait for a line instead of guessing with sleeps.

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <string>
#include <vector>

#include "keylane/log.hpp"

namespace log_capture {

class lines {
public:
  /// A writer that appends to this collection.
  keylane::log_writer writer() {
    return [this](keylane::log_level, std::string_view line) {
      std::lock_guard<std::mutex> guard{mtx_};
      lines_.emplace_back(line);
      cv_.notify_all();
    };
  }

  /// Waits until a line containing `part` was written; returns that line,
  /// or "" after `limit`.
  std::string wait_for(const std::string& part,
                       std::chrono::milliseconds limit
                       = std::chrono::seconds(10)) {
    std::unique_lock<std::mutex> guard{mtx_};
    std::string found;
    cv_.wait_for(guard, limit, [&] {
      for (auto& l : lines_)
        if (l.find(part) != std::string::npos) {
          found = l;
          return true;
        }
      return false;
    });
    return found;
  }

  /// How many lines contain `part`.
  size_t count(const std::string& part) {
    std::lock_guard<std::mutex> guard{mtx_};
    size_t n = 0;
    for (auto& l : lines_)
      n += l.find(part) != std::string::npos ? 1 : 0;
    return n;
  }

  /// All lines so far, for failure messages.
  std::string all() {
    std::lock_guard<std::mutex> guard{mtx_};
    std::string out;
    for (auto& l : lines_)
      out += l + '\n';
    return out;
  }

private:
  std::mutex mtx_;
  std::condition_variable cv_;
  std::vector<std::string> lines_;
};

} // namespace log_capture
