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

/// The storage of `key_table`: one slot per key, striped over
/// independently locked shards so producers of different keys rarely meet.
/// It serialises the submits of each key and bounds per key the events
/// accepted but not yet completed; what a slot means (route, waiting,
/// parked) is the table's. `admit` runs its continuation under the key's
/// stripe lock: the caller assigns the sequence number and enqueues there,
/// so a key's events enter every queue in sequence-number order even when
/// they come from different threads. Thread-safe. A key with work, a live
/// lane or held events has a slot. One that has none of them is left in
/// place (it is a default slot again) and purged in bulk once a stripe
/// holds about as many unused slots as used ones, and when the runtime
/// goes idle (`purge`): erasing and re-inserting a key at each activation
/// moved neighbouring entries both times. So memory follows the active
/// keys, not every key ever seen; with an `unbounded` limit the count is
/// kept but never refuses.
class backlog {
public:
  static constexpr size_t shard_count = 64;

  /// What the backlog keeps per key, read and written under its lock. Its
  /// fields change only through `key_table`'s verbs (and the count here,
  /// in `admit` and `release`): the table is the one owner of a key's life.
  /// A held key that is not parked waits for a slot of the cap: its events
  /// wait here, in order, as a list the slot owns.
  class slot {
  public:
    /// Events accepted and not yet completed.
    [[nodiscard]] size_t count() const noexcept { return count_; }
    /// The live lane's id; 0: none.
    [[nodiscard]] uint64_t lane() const noexcept { return lane_; }
    /// The shard that hosts the live lane.
    [[nodiscard]] uint32_t shard() const noexcept { return shard_; }
    /// No lane may start for it now (it waits, or it is parked).
    [[nodiscard]] bool held() const noexcept { return held_; }
    /// Its key is parked: a live lane parks what it is sent, and with no
    /// lane its events go to the supervisor, which parks them behind.
    [[nodiscard]] bool parked() const noexcept { return parked_; }
    /// The oldest event a waiting key holds (linked through `next`).
    [[nodiscard]] const event_base* first_held() const noexcept {
      return held_first_;
    }

  private:
    friend class backlog;
    friend class key_table;
    friend struct slot_access; // tests set up routes directly

    void hold(event_ptr ev) noexcept {
      auto* p = ev.release();
      p->next = nullptr;
      (held_last_ ? held_last_->next : held_first_) = p;
      held_last_ = p;
    }
    [[nodiscard]] event_base* take_held() noexcept {
      held_last_ = nullptr;
      return std::exchange(held_first_, nullptr);
    }

    size_t count_ = 0;
    uint64_t lane_ = 0;
    uint32_t shard_ = 0;
    bool held_ = false;
    bool parked_ = false;
    event_base* held_first_ = nullptr;
    event_base* held_last_ = nullptr;
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
    if (xp->count_ >= limit_ && !force) {
      if (!(wait && wait_for_room(s, guard, k, deadline, cancelled)))
        return false;
      xp = &slot_of(s, k); // re-found: the wait let others rehash
    }
    auto& x = *xp;
    ++x.count_;
    try {
      then(x);
    } catch (...) {
      --x.count_;
      throw;
    }
    return true;
  }

  /// Runs `fn(slot&)` under `k`'s shard lock, so no event of `k` is
  /// admitted meanwhile.
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

  /// Runs `fn(slot*)` under `k`'s shard lock: its slot, or null if it has
  /// none (nothing is made for it).
  template <class F>
  decltype(auto) find(const key& k, F&& fn) {
    auto& s = shards_[shard_index(k)];
    std::lock_guard<spin_mutex> guard{s.mtx};
    return fn(find_slot(s, k));
  }

  /// Gives back `n` of `x`'s count and wakes producers waiting for room
  /// (under `x`'s lock, in `locked` or `find`).
  void release_locked(const key& k, slot& x, size_t n) noexcept;

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
    return x.count_ == 0 && x.lane_ == 0 && !x.held_;
  }

  bool wait_for_room(shard& s, std::unique_lock<spin_mutex>& guard,
                     const key& k,
                     std::chrono::steady_clock::time_point deadline,
                     const std::atomic<bool>& cancelled);

  size_t limit_;
  std::array<shard, shard_count> shards_;
};

} // namespace keylane::detail
