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
    if (slot_of(s, k).count < limit_) {
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
  x.count = x.count > n ? x.count - n : 0;
  if (s.waiters > 0)
    s.cv.notify_all();
}

bool backlog::close_route(const key& k, uint64_t lane, bool parked,
                          size_t done) {
  auto& s = shards_[shard_index(k)];
  std::lock_guard<spin_mutex> guard{s.mtx};
  auto* xp = find_slot(s, k);
  if (xp == nullptr)
    return true; // not routed to it (cannot happen; nothing to clear)
  auto& x = *xp;
  if (done != 0) {
    x.count = x.count > done ? x.count - done : 0;
    if (s.waiters > 0)
      s.cv.notify_all();
  }
  if (x.lane != lane)
    return true; // as above
  if (x.count != 0)
    return false;
  x.lane = 0;
  x.held = x.parked = parked;
  return true;
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
