// SPDX-License-Identifier: Apache-2.0
#include "keylane/detail/backlog.hpp"

#include <algorithm>
#include <iterator>

namespace keylane::detail {

bool backlog::wait_for_room(shard& s, std::unique_lock<spin_mutex>& guard,
                            const key& k,
                            std::chrono::steady_clock::time_point deadline,
                            const std::atomic<bool>& cancelled) {
  if (deadline == no_deadline)
    deadline = std::chrono::steady_clock::now() + std::chrono::hours(24 * 365);
  ++s.waiters;
  bool room = false;
  for (;;) {
    if (slot_of(s, k).count_ < limit_) {
      room = true;
      break;
    }
    if (cancelled.load(std::memory_order_acquire))
      break;
    if (s.cv.wait_until(guard, deadline) == std::cv_status::timeout
        && std::chrono::steady_clock::now() >= deadline)
      break;
  }
  --s.waiters;
  return room;
}

void backlog::release(const key& k, size_t n) {
  if (n == 0)
    return;
  auto& s = shards_[shard_index(k)];
  std::lock_guard<spin_mutex> guard{s.mtx};
  auto* xp = find_slot(s, k);
  if (xp == nullptr)
    return;
  auto& x = *xp;
  x.count_ = x.count_ > n ? x.count_ - n : 0;
  if (s.waiters > 0)
    s.cv.notify_all();
}

void backlog::release_locked(const key& k, slot& x, size_t n) noexcept {
  if (n == 0)
    return;
  x.count_ = x.count_ > n ? x.count_ - n : 0;
  auto& s = shards_[shard_index(k)];
  if (s.waiters > 0)
    s.cv.notify_all();
}

void backlog::purge(shard& s) {
  for (auto i = s.slots.begin(); i != s.slots.end();)
    i = unused(i->second) ? s.slots.erase(i) : std::next(i);
  for (auto i = s.int_slots.begin(); i != s.int_slots.end();)
    i = unused(i->second) ? s.int_slots.erase(i) : std::next(i);
  if (s.slots.empty() && s.slots.bucket_count() > 64)
    slot_map{}.swap(s.slots);
  if (s.int_slots.empty() && s.int_slots.bucket_count() > 64)
    int_slot_map{}.swap(s.int_slots);
  s.purge_at = std::max(purge_floor, 2 * s.size());
}

void backlog::purge() {
  for (auto& s : shards_) {
    std::lock_guard<spin_mutex> guard{s.mtx};
    purge(s);
  }
}

void backlog::wake_all() {
  for (auto& s : shards_) {
    std::lock_guard<spin_mutex> guard{s.mtx};
    s.cv.notify_all();
  }
}

} // namespace keylane::detail
