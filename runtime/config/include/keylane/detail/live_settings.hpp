// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>

#include "keylane/config.hpp"

namespace keylane::detail {

/// The settings in force: the start settings with every reload applied.
/// Lanes compare `generation()` (one load) to learn that they changed.
///
/// Thread-safety: any thread may read; `set` is called by one reload at a
/// time. A reader that sees a new generation sees its settings.
class live_settings {
public:
  explicit live_settings(const settings& start)
    : live_(std::make_shared<const settings>(start)),
      record_latency_(start.metrics_latency),
      window_auto_(start.window_auto) {
  }

  /// The settings in force.
  [[nodiscard]] settings_ptr get() const {
    std::lock_guard<std::mutex> guard{mtx_};
    return live_;
  }

  /// Bumped by every `set`.
  [[nodiscard]] uint64_t generation() const noexcept {
    return gen_.load(std::memory_order_acquire);
  }

  /// Whether the sink records the latency histogram (`metrics.latency`).
  [[nodiscard]] bool record_latency() const noexcept {
    return record_latency_.load(std::memory_order_relaxed);
  }

  /// Whether the sink sizes the window (`runtime.window = "auto"`).
  [[nodiscard]] bool window_auto() const noexcept {
    return window_auto_.load(std::memory_order_relaxed);
  }

  /// Puts `next` in force.
  void set(settings_ptr next) {
    record_latency_.store(next->metrics_latency, std::memory_order_relaxed);
    window_auto_.store(next->window_auto, std::memory_order_relaxed);
    {
      std::lock_guard<std::mutex> guard{mtx_};
      live_ = std::move(next);
    }
    gen_.fetch_add(1, std::memory_order_acq_rel);
  }

private:
  mutable std::mutex mtx_;
  settings_ptr live_;
  std::atomic<uint64_t> gen_{0};
  std::atomic<bool> record_latency_;
  std::atomic<bool> window_auto_;
};

} // namespace keylane::detail
