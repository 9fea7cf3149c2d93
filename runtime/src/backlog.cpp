#include "keylane/detail/backlog.hpp"

#include "keylane/config.hpp"

namespace keylane::detail {

bool backlog::enabled() const noexcept {
  return limit_ != unbounded;
}

bool backlog::try_acquire(const key& k) {
  if (!enabled())
    return true;
  auto& s = shard_of(k);
  std::lock_guard<std::mutex> guard{s.mtx};
  auto& n = s.counts[k];
  if (n >= limit_)
    return false;
  ++n;
  return true;
}

bool backlog::acquire(const key& k,
                      std::chrono::steady_clock::time_point deadline,
                      const std::atomic<bool>& cancelled) {
  if (!enabled())
    return true;
  auto& s = shard_of(k);
  std::unique_lock<std::mutex> guard{s.mtx};
  ++s.waiters;
  bool taken = false;
  for (;;) {
    auto& n = s.counts[k];
    if (n < limit_) {
      ++n;
      taken = true;
      break;
    }
    if (cancelled.load(std::memory_order_acquire))
      break;
    if (s.cv.wait_until(guard, deadline) == std::cv_status::timeout
        && std::chrono::steady_clock::now() >= deadline)
      break;
  }
  --s.waiters;
  if (!taken) {
    auto i = s.counts.find(k);
    if (i != s.counts.end() && i->second == 0)
      s.counts.erase(i);
  }
  return taken;
}

void backlog::release(const key& k, size_t n) {
  if (!enabled() || n == 0)
    return;
  auto& s = shard_of(k);
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
  if (!enabled())
    return;
  for (auto& s : shards_) {
    std::lock_guard<std::mutex> guard{s.mtx};
    s.cv.notify_all();
  }
}

} // namespace keylane::detail
