#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <mutex>
#include <functional>

#include <tsl/robin_map.h>

#include "keylane/key.hpp"

namespace keylane::detail {

/// Serialises the submits of each key and bounds, per key, the events
/// accepted but not yet completed. Keys are striped over independently
/// locked shards, so producers of different keys rarely meet. `admit` runs
/// its continuation under the key's shard lock: the caller assigns the
/// sequence number and enqueues there, so a key's events enter ingress in
/// sequence-number order even when they come from different threads.
/// Thread-safe. Each key with work or a routed lane has a `slot`, which
/// vanishes once the key has neither, so memory follows the active keys,
/// not every key ever seen; with an `unbounded` limit the count is kept
/// but never refuses.
///
/// A slot also says where the key's events go: to ingress (the supervisor
/// routes them) or straight to the lane that hosts the key (`route`). The
/// lane sets the route once it holds every event that went to ingress, and
/// clears it before it retires, once it holds every event sent straight to
/// it; both under the key's lock, so the two paths never overtake each
/// other.
class backlog {
public:
  static constexpr size_t shard_count = 64;

  /// A live lane that takes a key's events without the supervisor.
  struct route {
    void* lane = nullptr; // null: events go to ingress
    uint32_t shard = 0;   // the shard actor that hosts it
  };

  /// What the backlog keeps per key, read and written under its lock.
  struct slot {
    size_t count = 0;      // events accepted and not yet completed
    route to;              // where new events go
    uint64_t last_ingress = 0; // seq + 1 of the newest event sent to ingress
    uint64_t last_direct = 0;  // seq + 1 of the newest event sent to `to`
  };

  explicit backlog(size_t limit) : limit_(limit) {}

  /// A deadline for `admit` that never comes (and costs no clock read on
  /// the path that does not wait).
  static constexpr std::chrono::steady_clock::time_point no_deadline{};

  /// The shard that serialises `k`: the hash's top bits, so the bits the
  /// shard's table indexes by (the low ones) still vary within a shard.
  [[nodiscard]] static size_t shard_index(const key& k) noexcept {
    static_assert(shard_count == 64, "shard_index takes the top 6 bits");
    return static_cast<size_t>(k.hash() >> 58);
  }

  /// Takes one slot of `k` — waiting for room if `wait`, until `deadline`
  /// (`no_deadline`: none) or until `cancelled` turns true — and runs `then(slot&)` under the
  /// shard lock. Returns false, without running `then`, if no slot was
  /// taken. If `then` throws, the slot is given back.
  template <class F>
  bool admit(const key& k, bool wait,
             std::chrono::steady_clock::time_point deadline,
             const std::atomic<bool>& cancelled, F&& then) {
    auto& s = shards_[shard_index(k)];
    std::unique_lock<std::mutex> guard{s.mtx};
    // One lookup on the common path (room for the key).
    auto i = s.slots.try_emplace(k).first;
    if (i->second.count >= limit_) {
      if (!(wait && wait_for_room(s, guard, k, deadline, cancelled))) {
        if (auto j = s.slots.find(k); j != s.slots.end() && unused(j->second))
          erase(s, j);
        return false;
      }
      i = s.slots.find(k); // re-found: the wait let others rehash
    }
    auto& x = i.value();
    ++x.count;
    try {
      then(x);
    } catch (...) {
      if (--x.count == 0 && unused(x))
        s.slots.erase(i);
      throw;
    }
    return true;
  }

  /// Runs `fn(force)` under `k`'s shard lock, so no event of `k` is
  /// admitted meanwhile; `force(n)` takes `n` slots of `k` past the limit
  /// (for replayed events, which were accepted once already).
  template <class F>
  decltype(auto) locked(const key& k, F&& fn) {
    auto& s = shards_[shard_index(k)];
    std::lock_guard<std::mutex> guard{s.mtx};
    auto force = [&s, &k](size_t n) {
      if (n > 0)
        s.slots[k].count += n;
    };
    return fn(force);
  }

  /// Returns `n` slots of `k`.
  void release(const key& k, size_t n);

  /// Returns `n` slots of `k` for its live lane `to`, and routes `k`'s new
  /// events to that lane if `may_route` and the lane holds every event that
  /// went to ingress (`ingress_seen`: seq + 1 of the newest it got from the
  /// supervisor, or later). Returns whether `k` now routes to `to`.
  bool release_routed(const key& k, size_t n, route to, bool may_route,
                      uint64_t ingress_seen);

  /// Stops routing `k` to `lane` if the lane holds every event sent to it
  /// (`direct_seen`: seq + 1 of the newest it got); true if `k` does not
  /// route to `lane` afterwards (then no event of `k` reaches it directly
  /// any more). False: an event is on its way to the lane.
  bool unroute(const key& k, const void* lane, uint64_t direct_seen);

  /// Wakes every waiter (used when the runtime stops).
  void wake_all();

private:
  // Open addressing with the hash stored: one probe of adjacent memory per
  // lookup and no node to allocate per key activation, where a node-based
  // map missed the cache on most lookups.
  using slot_map = tsl::robin_map<key, slot, key_hasher, std::equal_to<key>,
                                  std::allocator<std::pair<key, slot>>, true>;

  struct alignas(64) shard { // one lock per cache line: shards don't contend
    std::mutex mtx;
    std::condition_variable cv;
    size_t waiters = 0;
    slot_map slots;
  };

  // Erases `i`; a stripe that became empty gives its buckets back, so a
  // burst of keys does not pin memory after it ended. Past 64 buckets
  // (~6.5 KB a stripe): at 1024 the 64 stripes kept ~6.8 MB after a burst.
  // A stripe empties under load only when few keys are in flight, and
  // then it regrows from small.
  static void erase(shard& s, slot_map::iterator i) {
    s.slots.erase(i);
    if (s.slots.empty() && s.slots.bucket_count() > 64)
      slot_map{}.swap(s.slots);
  }

  [[nodiscard]] static bool unused(const slot& x) noexcept {
    return x.count == 0 && x.to.lane == nullptr;
  }

  bool wait_for_room(shard& s, std::unique_lock<std::mutex>& guard,
                     const key& k,
                     std::chrono::steady_clock::time_point deadline,
                     const std::atomic<bool>& cancelled);

  size_t limit_;
  std::array<shard, shard_count> shards_;
};

} // namespace keylane::detail
