// SPDX-License-Identifier: Apache-2.0
#include "keylane/detail/ingress.hpp"

#include <algorithm>
#include <exception>
#include <thread>

#include <caf/all.hpp>

#include "keylane/detail/messages.hpp"

namespace keylane::detail {

ingress::ingress(size_t key_backlog, size_t window, size_t shards, size_t cap,
                 waiter& w)
  : window_(window), cap_(cap), waiter_(w), backlog_(key_backlog) {
  for (auto& t : tokens_)
    t = std::make_unique<producer_token>(queue_);
  for (size_t i = 0; i < shards; ++i) {
    auto box = std::make_unique<shard_inbox>();
    for (auto& t : box->tokens)
      t = std::make_unique<producer_token>(box->events);
    inboxes_.push_back(std::move(box));
  }
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
    waiter_.wait_until(waiter::after(std::chrono::hours(24 * 365)), [&] {
      got = take_credit();
      return got || closed_.load(std::memory_order_acquire);
    });
    if (!got)
      return leave(errc::stopped);
  }
  event_ptr ev;
  std::exception_ptr failure;
  uint64_t seq = 0;
  auto stripe = backlog::shard_index(k);
  bool to_lane = false;
  bool first_waiter = false;
  bool jumped = false;
  bool to_supervisor = false;
  uint32_t to_shard = 0;
  // No deadline: `admit` reads the clock only if it has to wait.
  bool admitted = backlog_.admit(k, may_wait, backlog::no_deadline, closed_,
                                 force, [&](backlog::slot& slot) {
    if (inline_fill_ && slot.lane != 0 && k.is_integer() && !force) {
      // The key's lane is live and takes the event whatever else the slot
      // says (as below): by value, nothing to build.
      inbox_item item;
      item.ev = nullptr;
      item.seq = seq = next_seq_.fetch_add(1, std::memory_order_acq_rel);
      item.submitted = clock::now();
      item.lane = slot.lane;
      item.key = k.integer();
      inline_fill_(ctx, item.payload);
      auto& box = *inboxes_[slot.shard];
      box.events.enqueue(*box.tokens[stripe], item);
      to_lane = true;
      to_shard = slot.shard;
      return;
    }
    try {
      ev = make(ctx);
    } catch (...) {
      failure = std::current_exception();
      return;
    }
    seq = next_seq_.fetch_add(1, std::memory_order_acq_rel);
    ev->seq = seq;
    ev->submitted = clock::now();
    if (slot.lane == 0 && !slot.held) {
      // No lane: start one now, unless keys wait for a slot (they go
      // first) or none is free; then it waits for one in turn.
      if (waiting_.load(std::memory_order_seq_cst) == 0 && take_cap()) {
        open_lane(k, slot);
      } else if (past_cap) {
        overdraw_cap();
        open_lane(k, slot);
      } else {
        // Keys ahead of it: their admission looks again after it.
        first_waiter = begin_wait(slot, k);
      }
    } else if (slot.lane == 0 && past_cap && !slot.parked) {
      // The key waits for a slot: it starts now, its held events first.
      // Its entry stays in the queue; admission skips it (`admit_waiting`).
      overdraw_cap();
      auto* held = slot.take_held();
      open_lane(k, slot);
      while (held != nullptr) {
        auto* next = std::exchange(held->next, nullptr);
        send_to_lane(slot, event_ptr{held});
        held = next;
      }
      jumped = true;
    }
    if (slot.lane != 0) {
      to_lane = true;
      to_shard = slot.shard;
      send_to_lane(slot, std::move(ev));
    } else if (slot.parked) {
      ev->parked_behind = true;
      queue_.enqueue(*tokens_[stripe], ev.release());
      to_supervisor = true;
    } else {
      hold(slot, std::move(ev));
    }
  });
  if (!admitted || failure) {
    if (failure)
      backlog_.release(k, 1);
    in_flight_.fetch_sub(1, std::memory_order_acq_rel);
    if (failure) {
      leave(errc::none);
      std::rethrow_exception(failure);
    }
    return leave(closed_.load() ? errc::stopped : errc::key_backlog_full);
  }
  if (to_lane) {
    wake_shard(to_shard);
    // The entry left in the queue counts as a waiting key: with a slot
    // free, nobody else would look at the queue behind it.
    if (jumped)
      admit_waiting();
  } else if (first_waiter) {
    // A slot may have come free meanwhile, with nobody left to hand it
    // on (the retiring shard saw no key waiting); else idle lanes give
    // theirs up.
    find_slot();
  } else if (to_supervisor) {
    wake_supervisor();
  }
  leave(errc::none);
  return admission{errc::none, seq};
}

size_t ingress::take_caps(size_t want) noexcept {
  auto cap = cap_.load(std::memory_order_seq_cst);
  auto cur = active_.load(std::memory_order_seq_cst);
  size_t n = 0;
  do {
    if (cur >= cap)
      return 0;
    n = std::min(want, cap - cur);
  } while (!active_.compare_exchange_weak(cur, cur + n,
                                          std::memory_order_seq_cst));
  auto peak = peak_.load(std::memory_order_relaxed);
  while (cur + n > peak
         && !peak_.compare_exchange_weak(peak, cur + n,
                                         std::memory_order_relaxed)) {
  }
  return n;
}

void ingress::overdraw_cap() noexcept {
  auto now = active_.fetch_add(1, std::memory_order_seq_cst) + 1;
  auto peak = peak_.load(std::memory_order_relaxed);
  while (now > peak
         && !peak_.compare_exchange_weak(peak, now, std::memory_order_relaxed)) {
  }
}

uint32_t ingress::open_lane(const key& k, backlog::slot& s) {
  // The shard with the least work: the events it holds unfinished (a hot
  // key's queue counts in full, so cold keys go elsewhere and both cores
  // stay busy) plus its lanes. A key's activations may land on different
  // shards, never two at once (the next starts after the previous one
  // cleared the route).
  uint32_t best = 0;
  uint64_t best_score = UINT64_MAX;
  for (uint32_t i = 0; i < inboxes_.size(); ++i) {
    auto& box = *inboxes_[i];
    auto score = box.load.load(std::memory_order_relaxed)
                 + box.lanes.load(std::memory_order_relaxed);
    if (score < best_score) {
      best = i;
      best_score = score;
    }
  }
  inboxes_[best]->lanes.fetch_add(1, std::memory_order_relaxed);
  s.lane = backlog_.name_lane(k);
  s.shard = best;
  s.held = false;
  return best;
}

void ingress::send_to_lane(backlog::slot& s, event_ptr ev) {
  ev->lane = s.lane;
  ev->parked_behind = false;
  auto& box = *inboxes_[s.shard];
  auto stripe = backlog::shard_index(ev->k);
  inbox_item item;
  item.ev = ev.get();
  box.events.enqueue(*box.tokens[stripe], item);
  (void) ev.release();
}

event_ptr ingress::open(const inbox_item& item) const {
  if (item.ev != nullptr)
    return event_ptr{item.ev};
  auto ev = inline_event_(key{item.key}, item.payload);
  ev->seq = item.seq;
  ev->submitted = item.submitted;
  ev->lane = item.lane;
  return ev;
}

void ingress::lane_gone(size_t i, bool keeps) noexcept {
  inboxes_[i]->lanes.fetch_sub(1, std::memory_order_relaxed);
  if (!keeps)
    release_cap();
}

bool ingress::begin_wait(backlog::slot& s, const key& k) {
  s.held = true;
  std::lock_guard<spin_mutex> guard{wait_mtx_};
  wait_keys_.push_back(k);
  return waiting_.fetch_add(1, std::memory_order_seq_cst) == 0;
}

size_t ingress::pop_waiting(std::vector<key>& out, size_t max) {
  std::lock_guard<spin_mutex> guard{wait_mtx_};
  auto n = std::min(max, wait_keys_.size());
  for (size_t i = 0; i < n; ++i) {
    out.push_back(std::move(wait_keys_.front()));
    wait_keys_.pop_front();
  }
  if (n > 0)
    waiting_.fetch_sub(n, std::memory_order_seq_cst);
  return n;
}

void ingress::purge_idle() {
  backlog_.purge();
  std::lock_guard<spin_mutex> guard{wait_mtx_};
  if (wait_keys_.empty()) // a burst of waiting keys pins no memory after it
    std::deque<key>{}.swap(wait_keys_);
}

void ingress::admit_waiting(size_t holding) {
  // Pairs with `begin_wait` then `admit_waiting` in submit, and with the
  // count a retire gives back before it calls this: whoever moves last
  // sees the other's change, so a free slot never idles while a key waits.
  // Slots held and not wanted are given back before that check.
  auto go = [this] {
    return waiting_.load(std::memory_order_seq_cst) > 0
           && !closed_.load(std::memory_order_acquire);
  };
  // Kept per thread: this runs on every key that begins to wait, and a
  // batch's keys must not cost an allocation.
  thread_local std::vector<key> keys;
  if (holding > 0) {
    // Lanes an ask started past the cap (or above a lowered one): the
    // slots kept from retires go back first, or each such start would
    // raise the count for as long as keys wait.
    auto cap = cap_.load(std::memory_order_seq_cst);
    auto cur = active_.load(std::memory_order_seq_cst);
    if (cur > cap) {
      auto back = std::min(holding, cur - cap);
      release_cap(back);
      holding -= back;
    }
  }
  for (;;) {
    if (holding > 0 && !go()) {
      release_cap(holding);
      holding = 0;
    }
    if (!go())
      return;
    auto slots = std::min(holding, admit_batch);
    holding -= slots;
    if (slots == 0) {
      slots = take_caps(std::min(waiting(), admit_batch));
      if (slots == 0) {
        // Keys still wait and the cap is full again. A shard that looked
        // between a retire and this admission saw a free slot and kept
        // its idle lanes; ask again, or the keys wait for its linger.
        ask_for_idle_lanes();
        return;
      }
    }
    keys.clear();
    auto n = pop_waiting(keys, slots);
    if (n < slots)
      release_cap(slots - n); // other threads took keys; look again
    // One wake-up per shard per batch, after its lanes' events are in.
    uint64_t wake = 0;
    size_t unused = 0;
    for (auto& k : keys) {
      uint32_t shard = UINT32_MAX;
      backlog_.locked(k, [&](backlog::slot& s) {
        // An ask started it meanwhile (past the cap), and it may since
        // have retired, parked or begun to wait again (a newer entry).
        if (s.lane != 0 || !s.held || s.parked)
          return;
        // Only the thread that popped the key starts it; meanwhile submit
        // only appended to its events.
        auto* ev = s.take_held();
        shard = open_lane(k, s);
        while (ev != nullptr) {
          auto* next = std::exchange(ev->next, nullptr);
          send_to_lane(s, event_ptr{ev});
          ev = next;
        }
      });
      if (shard == UINT32_MAX)
        ++unused;
      else if (shard < 64)
        wake |= uint64_t{1} << shard;
      else
        wake_shard(shard);
    }
    keys.clear();
    if (unused > 0)
      release_cap(unused);
    for (uint32_t i = 0; wake != 0; ++i, wake >>= 1)
      if ((wake & 1) != 0)
        wake_shard(i);
  }
}

void ingress::ask_for_idle_lanes() {
  // Only while the cap is full: then a waiting key needs an idle lane to
  // retire. `note_idle_lanes` then `waiting()` on the shard's side pairs
  // with `begin_wait` then this: one of the two sees the other.
  if (!slot_wanted())
    return;
  for (auto& box : inboxes_) {
    if (box->idle.load(std::memory_order_seq_cst) == 0)
      continue;
    if (box->reclaim_signalled.load(std::memory_order_relaxed))
      continue;
    if (!box->reclaim_signalled.exchange(true, std::memory_order_acq_rel))
      caf::anon_send(box->actor, reclaim_atom::value);
  }
}

void ingress::rearm_reclaim(size_t i) noexcept {
  inboxes_[i]->reclaim_signalled.store(false, std::memory_order_relaxed);
  std::atomic_thread_fence(std::memory_order_seq_cst);
}

std::optional<ingress::held_event> ingress::find_held(uint64_t seq) {
  std::optional<held_event> found;
  backlog_.for_each([&](const key& k, backlog::slot& s) {
    for (auto* ev = s.held_first; ev != nullptr && !found; ev = ev->next)
      if (ev->seq == seq)
        found = held_event{k, ev->submitted, 0};
  });
  if (found) {
    std::lock_guard<spin_mutex> guard{wait_mtx_};
    auto i = std::find(wait_keys_.begin(), wait_keys_.end(), found->k);
    found->ahead = static_cast<size_t>(i - wait_keys_.begin());
  }
  return found;
}

void ingress::close() {
  closed_.store(true, std::memory_order_seq_cst);
  backlog_.wake_all();
  waiter_.wake();
  while (inside_submit_.load(std::memory_order_acquire) != 0)
    std::this_thread::yield();
}

std::vector<event_ptr> ingress::detach_all() {
  supervisor_ = nullptr;
  std::vector<event_ptr> left;
  backlog_.for_each([&](const key&, backlog::slot& s) {
    for (auto* ev = s.take_held(); ev != nullptr;) {
      auto* next = std::exchange(ev->next, nullptr);
      left.emplace_back(ev);
      ev = next;
    }
  });
  {
    std::lock_guard<spin_mutex> guard{wait_mtx_};
    wait_keys_.clear();
    waiting_.store(0, std::memory_order_seq_cst);
  }
  event_base* p = nullptr;
  while (queue_.try_dequeue(p))
    left.emplace_back(p);
  for (auto& box : inboxes_) {
    box->actor = nullptr;
    inbox_item item;
    while (box->events.try_dequeue(item))
      left.push_back(open(item));
  }
  return left;
}

void ingress::wake_supervisor() {
  // Pairs with the fence in `rearm`: either the supervisor sees our event
  // in its drain, or we see the flag cleared and signal it again.
  std::atomic_thread_fence(std::memory_order_seq_cst);
  if (signalled_.load(std::memory_order_relaxed))
    return;
  if (!signalled_.exchange(true, std::memory_order_acq_rel))
    caf::anon_send(supervisor_, drain_atom::value);
}

void ingress::rearm() noexcept {
  signalled_.store(false, std::memory_order_relaxed);
  std::atomic_thread_fence(std::memory_order_seq_cst);
}

size_t ingress::dequeue_of(const key& k, event_base** buf, size_t max) {
  return queue_.try_dequeue_bulk_from_producer(
    *tokens_[backlog::shard_index(k)], buf, max);
}

void ingress::wake_shard(size_t i) {
  // As `wake_supervisor`, with `rearm_inbox` on the other side.
  auto& box = *inboxes_[i];
  std::atomic_thread_fence(std::memory_order_seq_cst);
  if (box.signalled.load(std::memory_order_relaxed))
    return;
  if (!box.signalled.exchange(true, std::memory_order_acq_rel))
    caf::anon_send(box.actor, inbox_atom::value);
}

void ingress::rearm_inbox(size_t i) noexcept {
  inboxes_[i]->signalled.store(false, std::memory_order_relaxed);
  std::atomic_thread_fence(std::memory_order_seq_cst);
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
  // Wake blocked producers only when there is room, and `drain` at zero.
  // (Credit comes back in batches, so this is not a wake-up per event.)
  if (left >= window_.load(std::memory_order_relaxed) && left != 0)
    return;
  waiter_.wake();
}

void ingress::resize_window(size_t n) {
  auto old = window_.exchange(n, std::memory_order_seq_cst);
  if (n > old)
    waiter_.wake_if_waiting();
}

uint64_t ingress::depth() const noexcept {
  uint64_t n = queue_.size_approx();
  for (auto& box : inboxes_)
    n += box->events.size_approx();
  return n;
}

} // namespace keylane::detail
