#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <mutex>
#include <unordered_map>

#include "keylane/key.hpp"

namespace keylane::detail {

/// Counts, per key, the events accepted but not yet completed, and bounds
/// them. Thread-safe: keys are striped over independently locked shards, so
/// producers of different keys rarely meet; entries vanish at zero, so
/// memory follows the keys with work, not every key ever seen. With an
/// `unbounded` limit it does nothing and costs nothing.
class backlog {
public:
  explicit backlog(size_t limit) : limit_(limit) {}

  /// True when a limit is set.
  [[nodiscard]] bool enabled() const noexcept;

  /// Takes one slot for `k` if there is room.
  [[nodiscard]] bool try_acquire(const key& k);

  /// Takes one slot for `k`, waiting for room until `deadline` or until
  /// `cancelled` turns true. Returns whether a slot was taken.
  [[nodiscard]] bool acquire(const key& k,
                             std::chrono::steady_clock::time_point deadline,
                             const std::atomic<bool>& cancelled);

  /// Returns `n` slots of `k`.
  void release(const key& k, size_t n);

  /// Wakes every waiter (used when the runtime stops).
  void wake_all();

private:
  static constexpr size_t shard_count = 64;
  struct alignas(64) shard { // one lock per cache line: shards don't contend
    std::mutex mtx;
    std::condition_variable cv;
    size_t waiters = 0;
    std::unordered_map<key, size_t, key_hasher> counts;
  };
  shard& shard_of(const key& k) noexcept {
    return shards_[(k.hash() >> 7) % shard_count];
  }
  size_t limit_;
  std::array<shard, shard_count> shards_;
};

} // namespace keylane::detail
