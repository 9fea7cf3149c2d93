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

/// Serialises the submits of each key and bounds, per key, the events
/// accepted but not yet completed. Keys are striped over independently
/// locked shards, so producers of different keys rarely meet. `admit` runs
/// its continuation under the key's shard lock: the caller assigns the
/// sequence number and enqueues there, so a key's events enter ingress in
/// sequence-number order even when they come from different threads.
/// Thread-safe. Count entries vanish at zero, so memory follows the keys
/// with work, not every key ever seen; with an `unbounded` limit nothing
/// is counted.
class backlog {
public:
  static constexpr size_t shard_count = 64;

  explicit backlog(size_t limit) : limit_(limit) {}

  /// The shard that serialises `k`.
  [[nodiscard]] static size_t shard_index(const key& k) noexcept {
    return (k.hash() >> 7) % shard_count;
  }

  /// Takes one slot of `k` — waiting for room if `wait`, until `deadline`
  /// or until `cancelled` turns true — and runs `then()` under the shard
  /// lock. Returns false, without running `then`, if no slot was taken.
  template <class F>
  bool admit(const key& k, bool wait,
             std::chrono::steady_clock::time_point deadline,
             const std::atomic<bool>& cancelled, F&& then) {
    auto& s = shards_[shard_index(k)];
    std::unique_lock<std::mutex> guard{s.mtx};
    if (limit_ != unbounded_limit) {
      // One lookup on the common path (room for the key).
      auto i = s.counts.try_emplace(k, 0).first;
      if (i->second >= limit_) {
        if (!(wait && wait_for_room(s, guard, k, deadline, cancelled))) {
          if (auto j = s.counts.find(k); j != s.counts.end() && j->second == 0)
            s.counts.erase(j);
          return false;
        }
        i = s.counts.find(k); // re-found: the wait let others rehash
      }
      ++i->second;
    }
    then();
    return true;
  }

  /// Runs `fn(force)` under `k`'s shard lock, so no event of `k` is
  /// admitted meanwhile; `force(n)` takes `n` slots of `k` past the limit
  /// (for replayed events, which were accepted once already).
  template <class F>
  decltype(auto) locked(const key& k, F&& fn) {
    auto& s = shards_[shard_index(k)];
    std::lock_guard<std::mutex> guard{s.mtx};
    auto force = [this, &s, &k](size_t n) {
      if (limit_ != unbounded_limit && n > 0)
        s.counts[k] += n;
    };
    return fn(force);
  }

  /// Returns `n` slots of `k`.
  void release(const key& k, size_t n);

  /// Wakes every waiter (used when the runtime stops).
  void wake_all();

private:
  static constexpr size_t unbounded_limit = static_cast<size_t>(-1);

  struct alignas(64) shard { // one lock per cache line: shards don't contend
    std::mutex mtx;
    std::condition_variable cv;
    size_t waiters = 0;
    std::unordered_map<key, size_t, key_hasher> counts;
  };

  bool wait_for_room(shard& s, std::unique_lock<std::mutex>& guard,
                     const key& k,
                     std::chrono::steady_clock::time_point deadline,
                     const std::atomic<bool>& cancelled);

  size_t limit_;
  std::array<shard, shard_count> shards_;
};

} // namespace keylane::detail
