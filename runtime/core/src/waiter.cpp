// SPDX-License-Identifier: Apache-2.0
#include "keylane/detail/waiter.hpp"

namespace keylane::detail {

std::chrono::steady_clock::time_point
waiter::after(std::chrono::nanoseconds d) {
  constexpr auto forever = std::chrono::hours(24 * 365);
  auto now = std::chrono::steady_clock::now();
  if (d >= std::chrono::nanoseconds{forever})
    return now + forever;
  return now + d;
}

bool waiter::wait_until(std::chrono::steady_clock::time_point deadline,
                        const std::function<bool()>& done) {
  std::unique_lock<std::mutex> guard{mtx_};
  waiters_.fetch_add(1, std::memory_order_seq_cst);
  bool ok = true;
  while (!done()) {
    if (cv_.wait_until(guard, deadline) == std::cv_status::timeout
        && std::chrono::steady_clock::now() >= deadline) {
      ok = done();
      break;
    }
  }
  waiters_.fetch_sub(1, std::memory_order_seq_cst);
  return ok;
}

void waiter::wake() {
  { std::lock_guard<std::mutex> guard{mtx_}; } // orders after the change
  cv_.notify_all();
}

} // namespace keylane::detail
