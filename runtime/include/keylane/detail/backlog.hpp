// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <mutex>
#include <functional>
#include <utility>

#include <tsl/robin_map.h>

#include "keylane/detail/event_base.hpp"
#include "keylane/detail/spin_mutex.hpp"
#include "keylane/key.hpp"

namespace keylane::detail {

/// Serialises the submits of each key, bounds per key the events accepted
/// but not yet completed, and is the one place that knows where a key's
/// events go. Keys are striped over independently locked shards, so
/// producers of different keys rarely meet. `admit` runs its continuation
/// under the key's shard lock: the caller assigns the sequence number and
/// enqueues there, so a key's events enter every queue in sequence-number
/// order even when they come from different threads. Thread-safe. Each key
/// with work, a live lane or held events has a `slot`. One that has none of
/// them is left in place (it is a default slot again) and purged in bulk
/// once a stripe holds about as many unused slots as used ones, and when
/// the runtime goes idle (`purge`): erasing and re-inserting a key at each
/// activation moved neighbouring entries both times. So memory follows
/// the active keys, not every key ever seen; with an `unbounded` limit the
/// count is kept but never refuses.
///
/// A slot's route: a live lane (`lane`, on `shard`) takes the key's events
/// straight from `submit`; a held key's go to the supervisor (it waits for
/// a slot of the cap, or it is parked); a key with neither starts a lane at
/// its next event. A lane's route is set when it starts and cleared when it
/// retires, both under the key's lock, and a lane retires only while the
/// count is zero: then no event of its key is on its way to it.
class backlog {
public:
  static constexpr size_t shard_count = 64;

  /// What the backlog keeps per key, read and written under its lock.
  /// A held key that is not parked waits for a slot of the cap: its events
  /// wait here, in order, as a list the slot owns (`hold`, `take_held`).
  struct slot {
    size_t count = 0;    // events accepted and not yet completed
    uint64_t lane = 0;   // the live lane's id; 0: none
    uint32_t shard = 0;  // the shard that hosts it
    bool held = false;   // no lane may start for it now (waits, or parked)
    bool parked = false; // held because the key is parked: its events go
                         // to the supervisor, which parks them behind
    event_base* held_first = nullptr; // events of a waiting key, oldest
    event_base* held_last = nullptr;  // first

    /// Appends `ev` to the events the waiting key holds.
    void hold(event_ptr ev) noexcept {
      auto* p = ev.release();
      p->next = nullptr;
      (held_last ? held_last->next : held_first) = p;
      held_last = p;
    }

    /// Takes the list `hold` built (the caller owns it from now on).
    [[nodiscard]] event_base* take_held() noexcept {
      held_last = nullptr;
      return std::exchange(held_first, nullptr);
    }
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
  /// (`no_deadline`: none) or until `cancelled` turns true; past the limit
  /// at once if `force` — and runs `then(slot&)` under the shard lock.
  /// Returns false, without running `then`, if no slot was taken. If
  /// `then` throws, the slot is given back.
  template <class F>
  bool admit(const key& k, bool wait,
             std::chrono::steady_clock::time_point deadline,
             const std::atomic<bool>& cancelled, bool force, F&& then) {
    auto& s = shards_[shard_index(k)];
    std::unique_lock<spin_mutex> guard{s.mtx};
    if (s.size() >= s.purge_at)
      purge(s);
    // One lookup on the common path (room for the key).
    auto* xp = &slot_of(s, k);
    if (xp->count >= limit_ && !force) {
      if (!(wait && wait_for_room(s, guard, k, deadline, cancelled)))
        return false;
      xp = &slot_of(s, k); // re-found: the wait let others rehash
    }
    auto& x = *xp;
    ++x.count;
    try {
      then(x);
    } catch (...) {
      --x.count;
      throw;
    }
    return true;
  }

  /// Runs `fn(slot&)` under `k`'s shard lock, so no event of `k` is
  /// admitted meanwhile; `fn` may raise the count past the limit (replayed
  /// events were accepted once already).
  template <class F>
  decltype(auto) locked(const key& k, F&& fn) {
    auto& s = shards_[shard_index(k)];
    std::lock_guard<spin_mutex> guard{s.mtx};
    return fn(slot_of(s, k));
  }

  /// A new lane id for `k`, unique in the backlog and never 0; call under
  /// `k`'s lock (in `admit` or `locked`). Counted per stripe, on the line
  /// of the lock held: no counter that every activation bumps.
  [[nodiscard]] uint64_t name_lane(const key& k) noexcept {
    auto i = shard_index(k);
    return (++shards_[i].lanes_named * shard_count) | i;
  }

  /// Drops every unused slot and gives emptied stripes' memory back (the
  /// runtime went idle).
  void purge();

  /// Returns `n` slots of `k`.
  void release(const key& k, size_t n);

  /// Clears `k`'s route to lane `lane` if no event of `k` is unfinished
  /// (none is on its way to the lane either); a parking lane leaves the
  /// key parked, its events held for the supervisor. False: the lane keeps
  /// the route, an event is on its way to it.
  /// `done`: finished events of `k` whose slots the lane gives back first.
  [[nodiscard]] bool close_route(const key& k, uint64_t lane, bool parked,
                                 size_t done);

  /// Wakes every waiter (used when the runtime stops).
  void wake_all();

  /// Runs `fn(const key&, slot&)` for every slot, each stripe under its
  /// lock (stop, and the stall log: not for the event path).
  template <class F>
  void for_each(F&& fn) {
    for (auto& s : shards_) {
      std::lock_guard<spin_mutex> guard{s.mtx};
      for (auto i = s.slots.begin(); i != s.slots.end(); ++i)
        fn(i->first, i.value());
      for (auto i = s.int_slots.begin(); i != s.int_slots.end(); ++i)
        fn(key{i->first}, i.value());
    }
  }

private:
  // Open addressing with the hash stored: one probe of adjacent memory per
  // lookup and no node to allocate per key activation, where a node-based
  // map missed the cache on most lookups.
  using slot_map = tsl::robin_map<key, slot, key_hasher, std::equal_to<key>,
                                  std::allocator<std::pair<key, slot>>, true>;
  // Integer keys, the common case, in a table of their own: a bucket of
  // 56 bytes that moves as plain bytes, where a `key` (56 bytes with its
  // string) made it 104 and each move a string's. Activation inserts a
  // key and the purge erases it, both moving neighbouring buckets: on
  // new_keys that was ~180 ns of CPU per event (docs/performance.md).
  struct int_hasher {
    size_t operator()(uint64_t x) const noexcept {
      return static_cast<size_t>(stable_hash(x));
    }
  };
  using int_slot_map = tsl::robin_map<uint64_t, slot, int_hasher>;

  // A stripe purges its unused slots once it holds `purge_at` slots, then
  // waits until it holds twice the slots it kept (amortised O(1) per
  // insert, and at most about half its slots unused).
  static constexpr size_t purge_floor = 64;

  struct alignas(64) shard { // one lock per cache line: shards don't contend
    spin_mutex mtx;
    uint64_t lanes_named = 0; // see name_lane
    std::condition_variable_any cv; // a full key's producers wait
    size_t waiters = 0;
    size_t purge_at = purge_floor;
    slot_map slots;         // string keys
    int_slot_map int_slots; // integer keys
    [[nodiscard]] size_t size() const noexcept {
      return slots.size() + int_slots.size();
    }
  };

  // `k`'s slot in its stripe `s`, made if it has none (under the lock).
  // A lookup first: most submits find their key, and the table's lookup
  // is about half the instructions of its insert path.
  static slot& slot_of(shard& s, const key& k) {
    if (k.is_integer()) {
      auto i = s.int_slots.find(k.integer());
      if (i != s.int_slots.end())
        return i.value();
      return s.int_slots.try_emplace(k.integer()).first.value();
    }
    auto i = s.slots.find(k);
    if (i != s.slots.end())
      return i.value();
    return s.slots.try_emplace(k).first.value();
  }
  // `k`'s slot, or null if it has none (under the lock).
  static slot* find_slot(shard& s, const key& k) {
    if (k.is_integer()) {
      auto i = s.int_slots.find(k.integer());
      return i == s.int_slots.end() ? nullptr : &i.value();
    }
    auto i = s.slots.find(k);
    return i == s.slots.end() ? nullptr : &i.value();
  }

  // Drops the unused slots of `s`; a stripe left empty gives its buckets
  // back, so a burst of keys does not pin memory after it ended. Past 64
  // buckets a table (~6.5 KB for string keys, ~3.5 KB for integer ones):
  // at 1024 the 64 stripes kept ~6.8 MB of string keys' buckets.
  static void purge(shard& s);

  [[nodiscard]] static bool unused(const slot& x) noexcept {
    return x.count == 0 && x.lane == 0 && !x.held;
  }

  bool wait_for_room(shard& s, std::unique_lock<spin_mutex>& guard,
                     const key& k,
                     std::chrono::steady_clock::time_point deadline,
                     const std::atomic<bool>& cancelled);

  size_t limit_;
  std::array<shard, shard_count> shards_;
};

} // namespace keylane::detail
