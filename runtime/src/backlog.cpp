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

bool backlog::release_routed(const key& k, size_t n, route to, bool may_route,
                             uint64_t ingress_seen) {
  auto& s = shards_[shard_index(k)];
  std::lock_guard<std::mutex> guard{s.mtx};
  auto i = s.slots.find(k);
  if (i == s.slots.end()) {
    if (!may_route)
      return false;
    // Nothing of `k` in flight: no slot. The lane holds all there was.
    i = s.slots.try_emplace(k).first;
  }
  auto& x = i.value();
  x.count = x.count > n ? x.count - n : 0;
  if (x.to.lane == nullptr && may_route && ingress_seen >= x.last_ingress)
    x.to = to;
  bool routed = x.to.lane == to.lane;
  if (unused(x))
    erase(s, i);
  if (n > 0 && s.waiters > 0)
    s.cv.notify_all();
  return routed;
}

bool backlog::unroute(const key& k, const void* lane, uint64_t direct_seen) {
  auto& s = shards_[shard_index(k)];
  std::lock_guard<std::mutex> guard{s.mtx};
  auto i = s.slots.find(k);
  if (i == s.slots.end() || i->second.to.lane != lane)
    return true;
  auto& x = i.value();
  if (direct_seen < x.last_direct)
    return false;
  x.to = route{};
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
