// SPDX-License-Identifier: Apache-2.0
#pragma once

// The output side every way delivers to: counts deliveries, checks per-key
// order and records latency.

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>

#include "latency_histogram.hpp"
#include "item.hpp"

namespace keylane::bench {

/// Receives every processed event of one run.
///
/// Thread-safety: `deliver` and `note_failure` may be called from any
/// number of threads (up to `max_threads()` distinct ones per output) at
/// once; each thread writes only its own slot, so delivery costs no shared
/// write besides one relaxed exchange on the key's order counter. The
/// reading functions (`delivered`, `violations`, `latency`, ...) are called
/// by the driver; they see a thread's deliveries once they see its count.
///
/// Order check: an event is a violation when its per-key index is not
/// exactly one more than the previous delivered index of its key (so
/// reordering, duplicates and gaps all count).
class output {
public:
  /// An output for keys in `[0, key_space)` and up to `max_threads`
  /// delivering threads (more abort the process); records latency when
  /// `record_latency` (events then carry their scheduled time).
  output(uint64_t key_space, bool record_latency, int max_threads);
  ~output();

  /// Delivers one processed event with its work result.
  void deliver(const item& it, uint64_t result) noexcept {
    auto& s = my_slot();
    if (record_latency_)
      s.latency->record(now_ns() - it.scheduled_ns);
    auto prev = next_[it.key].exchange(it.index + 1, std::memory_order_relaxed);
    if (prev != it.index)
      ++s.violations;
    s.checksum += result;
    s.count.store(s.count.load(std::memory_order_relaxed) + 1,
                  std::memory_order_release);
  }

  /// Records an event the way failed to process (counted, not delivered).
  void note_failure() noexcept {
    failures_.fetch_add(1, std::memory_order_relaxed);
  }

  /// Events delivered so far.
  [[nodiscard]] uint64_t delivered() const noexcept;

  /// Waits until `n` events were delivered; false after `timeout`.
  [[nodiscard]] bool wait_for(uint64_t n, std::chrono::nanoseconds timeout) const;

  /// Order violations so far (read after `wait_for`).
  [[nodiscard]] uint64_t violations() const noexcept;

  /// Failures noted so far.
  [[nodiscard]] uint64_t failures() const noexcept {
    return failures_.load(std::memory_order_relaxed);
  }

  /// Latency of every delivered event (read after `wait_for`).
  [[nodiscard]] common::latency_histogram latency() const;

  /// Distinct threads that delivered.
  [[nodiscard]] int threads() const noexcept;

  /// Distinct threads that may deliver.
  [[nodiscard]] int max_threads() const noexcept { return max_threads_; }

private:
  struct alignas(64) slot { // one cache line of counters per thread
    std::atomic<uint64_t> count{0};
    uint64_t violations = 0;
    uint64_t checksum = 0;
    std::unique_ptr<common::latency_histogram> latency;
  };

  slot& my_slot() noexcept;
  slot& claim_slot() noexcept;

  uint64_t epoch_;
  bool record_latency_;
  int max_threads_;
  std::unique_ptr<std::atomic<uint32_t>[]> next_;
  std::unique_ptr<slot[]> slots_;
  alignas(64) std::atomic<int> used_slots_{0};
  std::atomic<uint64_t> failures_{0};
};

} // namespace keylane::bench
