#include "keylane/detail/backlog.hpp"

namespace keylane::detail {

bool backlog::wait_for_room(shard& s, std::unique_lock<std::mutex>& guard,
                            const key& k,
                            std::chrono::steady_clock::time_point deadline,
                            const std::atomic<bool>& cancelled) {
  if (deadline == no_deadline)
    deadline = std::chrono::steady_clock::now() + std::chrono::hours(24 * 365);
  ++s.waiters;
  bool room = false;
  for (;;) {
    if (s.slots[k].count < limit_) {
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
  std::lock_guard<std::mutex> guard{s.mtx};
  auto i = s.slots.find(k);
  if (i == s.slots.end())
    return;
  auto& x = i.value();
  x.count = x.count > n ? x.count - n : 0;
  if (unused(x))
    erase(s, i);
  if (s.waiters > 0)
    s.cv.notify_all();
}

bool backlog::close_route(const key& k, uint64_t lane, bool parked) {
  auto& s = shards_[shard_index(k)];
  std::lock_guard<std::mutex> guard{s.mtx};
  auto i = s.slots.find(k);
  if (i == s.slots.end() || i->second.lane != lane)
    return true; // not routed to it (cannot happen; nothing to clear)
  auto& x = i.value();
  if (x.count != 0)
    return false;
  x.lane = 0;
  x.held = x.parked = parked;
  if (unused(x))
    erase(s, i);
  return true;
}

void backlog::wake_all() {
  for (auto& s : shards_) {
    std::lock_guard<std::mutex> guard{s.mtx};
    s.cv.notify_all();
  }
}

} // namespace keylane::detail
