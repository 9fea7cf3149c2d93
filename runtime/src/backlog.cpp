#include "keylane/detail/backlog.hpp"

namespace keylane::detail {

bool backlog::wait_for_room(shard& s, std::unique_lock<std::mutex>& guard,
                            const key& k,
                            std::chrono::steady_clock::time_point deadline,
                            const std::atomic<bool>& cancelled) {
  ++s.waiters;
  bool room = false;
  for (;;) {
    if (s.counts[k] < limit_) {
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
  if (limit_ == unbounded_limit || n == 0)
    return;
  auto& s = shards_[shard_index(k)];
  std::lock_guard<std::mutex> guard{s.mtx};
  auto i = s.counts.find(k);
  if (i == s.counts.end())
    return;
  i->second = i->second > n ? i->second - n : 0;
  if (i->second == 0)
    s.counts.erase(i);
  if (s.waiters > 0)
    s.cv.notify_all();
}

void backlog::wake_all() {
  for (auto& s : shards_) {
    std::lock_guard<std::mutex> guard{s.mtx};
    s.cv.notify_all();
  }
}

} // namespace keylane::detail
