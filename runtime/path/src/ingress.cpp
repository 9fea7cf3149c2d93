// SPDX-License-Identifier: Apache-2.0
#include "keylane/detail/ingress.hpp"

#include <thread>

#include "keylane/detail/inboxes.hpp"
#include "keylane/detail/key_table.hpp"
#include "keylane/detail/stamp_clock.hpp"

namespace keylane::detail {

namespace {

// How long a producer blocked on a full window sleeps at most before it
// looks for credit itself: `credit` wakes it only once half the window is
// free, and events that never end (or end only after this producer's next
// submit) must not keep it from the room there is.
constexpr auto credit_recheck = std::chrono::milliseconds(1);

} // namespace

ingress::ingress(size_t window, key_table& keys, inboxes& boxes, waiter& w)
  : window_(window), waiter_(w), keys_(keys), boxes_(boxes) {
}

bool ingress::take_credit() {
  // A compare-and-swap, never a speculative increment: a transient
  // overshoot would skew the count `credit` wakes waiters by.
  auto window = window_.load(std::memory_order_relaxed);
  if (window == unbounded) {
    in_flight_.fetch_add(1, std::memory_order_seq_cst);
    return true;
  }
  auto cur = in_flight_.load(std::memory_order_seq_cst);
  while (cur < window)
    if (in_flight_.compare_exchange_weak(cur, cur + 1,
                                         std::memory_order_seq_cst))
      return true;
  return false;
}

ingress::admission ingress::submit(const key& k, make_fn make, void* ctx,
                                   bool may_wait, bool force, bool past_cap) {
  inside_submit_.fetch_add(1, std::memory_order_seq_cst);
  auto leave = [this](errc e) {
    if (e != errc::none)
      rejected_.fetch_add(1, std::memory_order_relaxed);
    inside_submit_.fetch_sub(1, std::memory_order_release);
    return admission{e, 0};
  };
  if (closed_.load(std::memory_order_seq_cst))
    return leave(errc::stopped);
  if (force) {
    in_flight_.fetch_add(1, std::memory_order_seq_cst);
  } else if (!take_credit()) {
    if (!may_wait)
      return leave(errc::window_full);
    bool got = false;
    while (!waiter_.wait_until(waiter::after(credit_recheck), [&] {
      got = take_credit();
      return got || closed_.load(std::memory_order_acquire);
    })) {
    }
    if (!got)
      return leave(errc::stopped);
  }
  uint64_t seq = 0;
  // The number is taken under the key's lock, where the event is routed.
  auto fill = [&](inbox_item& item) {
    item.seq = seq = next_seq_.fetch_add(1, std::memory_order_acq_rel);
    item.submitted = stamp_clock::now();
    item.key = k.integer();
    boxes_.fill(ctx, item);
  };
  auto build = [&] {
    auto ev = make(ctx);
    ev->seq = seq = next_seq_.fetch_add(1, std::memory_order_acq_rel);
    ev->submitted = stamp_clock::now();
    return ev;
  };
  key_table::arrival a{may_wait, force, past_cap,
                       boxes_.by_value() && k.is_integer() && !force,
                       closed_};
  bool admitted = false;
  try {
    admitted = keys_.admit(k, a, fill, build);
  } catch (...) {
    in_flight_.fetch_sub(1, std::memory_order_acq_rel);
    leave(errc::none);
    throw;
  }
  if (!admitted) {
    in_flight_.fetch_sub(1, std::memory_order_acq_rel);
    return leave(closed_.load() ? errc::stopped : errc::key_backlog_full);
  }
  leave(errc::none);
  return admission{errc::none, seq};
}

void ingress::close() {
  closed_.store(true, std::memory_order_seq_cst);
  keys_.close();
  waiter_.wake();
  while (inside_submit_.load(std::memory_order_acquire) != 0)
    std::this_thread::yield();
}

void ingress::accept_replayed(std::vector<event_ptr>& evs) {
  // Past the window on purpose: these were accepted once; refusing them now
  // would leave them parked with no way to run.
  in_flight_.fetch_add(evs.size(), std::memory_order_seq_cst);
  auto first = next_seq_.fetch_add(evs.size(), std::memory_order_acq_rel);
  auto now = clock::now();
  for (auto& ev : evs) {
    ev->seq = first++;
    ev->submitted = now;
  }
}

void ingress::credit(size_t n) {
  auto left = in_flight_.fetch_sub(n, std::memory_order_seq_cst) - n;
  if (!waiter_.waiting())
    return;
  // Blocked producers wake once half the window is free (or on their own,
  // see `credit_recheck`), `drain` at zero. Woken at each batch's credit,
  // a producer faster than the shards slept and woke again per batch: on
  // hot_key, twice the context switches per event, each a core taken from
  // a shard.
  if (left > window_.load(std::memory_order_relaxed) / 2 && left != 0)
    return;
  waiter_.wake();
}

void ingress::resize_window(size_t n) {
  auto old = window_.exchange(n, std::memory_order_seq_cst);
  if (n > old)
    waiter_.wake_if_waiting();
}

} // namespace keylane::detail
