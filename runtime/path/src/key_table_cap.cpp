// SPDX-License-Identifier: Apache-2.0
// The cap on live lanes and the keys waiting for a slot of it, in arrival
// order: the whole protocol, from the start-or-wait decision to the retire
// claims that hand a retired lane's slot to the oldest waiting key. See
// docs/architecture.md for why no slot idles while a key waits.

#include "keylane/detail/key_table.hpp"

#include <algorithm>

namespace keylane::detail {

bool key_table::start_or_wait(const key& k, backlog::slot& s, bool past_cap,
                              route& r) {
  // No lane: start one now, unless keys wait for a slot (they go first) or
  // none is free (an ask goes past the cap); then the key waits in turn.
  if (waiting_.load(std::memory_order_seq_cst) == 0 && take_caps(1) == 1) {
    open_lane(k, s);
  } else if (past_cap) {
    overdraw_cap();
    open_lane(k, s);
  } else {
    // Keys ahead of it: their admission looks again after it.
    if (begin_wait(s, k))
      r.kind = route::first_waiter;
    return false;
  }
  r.kind = route::lane;
  r.shard = s.shard_;
  return true;
}

size_t key_table::take_caps(size_t want) noexcept {
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

void key_table::overdraw_cap() noexcept {
  // Lanes above the cap retire as they run dry, as after a lowered cap.
  auto now = active_.fetch_add(1, std::memory_order_seq_cst) + 1;
  auto peak = peak_.load(std::memory_order_relaxed);
  while (now > peak
         && !peak_.compare_exchange_weak(peak, now, std::memory_order_relaxed)) {
  }
}

bool key_table::slot_wanted() const noexcept {
  return waiting() > 0
         && active_.load(std::memory_order_seq_cst)
              >= cap_.load(std::memory_order_relaxed);
}

bool key_table::begin_wait(backlog::slot& s, const key& k) {
  // True if no other key waited: then only the caller is sure to look for
  // a slot for it. Otherwise whoever admits the keys ahead of it looks
  // again after taking them.
  s.held_ = true;
  std::lock_guard<spin_mutex> guard{wait_mtx_};
  wait_keys_.push_back(k);
  return waiting_.fetch_add(1, std::memory_order_seq_cst) == 0;
}

size_t key_table::pop_waiting(std::vector<key>& out, size_t max) {
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

void key_table::admit_waiting(size_t holding) {
  // Pairs with `begin_wait` then `admit_waiting` in admission, and with the
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
        if (s.lane_ != 0 || !s.held_ || s.parked_)
          return;
        // Only the thread that popped the key starts it; meanwhile
        // admission only appended to its events.
        open_lane(k, s);
        send_held(k, s);
        shard = s.shard_;
      });
      if (shard == UINT32_MAX)
        ++unused;
      else if (shard < 64)
        wake |= uint64_t{1} << shard;
      else
        boxes_.wake_shard(shard);
    }
    keys.clear();
    if (unused > 0)
      release_cap(unused);
    for (uint32_t i = 0; wake != 0; ++i, wake >>= 1)
      if ((wake & 1) != 0)
        boxes_.wake_shard(i);
  }
}

void key_table::ask_for_idle_lanes() {
  // Only while the cap is full: then a waiting key needs an idle lane to
  // retire. `idle_lanes` then `waiting()` on the shard's side pairs with
  // `begin_wait` then this: one of the two sees the other.
  if (slot_wanted())
    boxes_.ask_for_idle_lanes();
}

bool key_table::idle_lanes(size_t i, size_t n) noexcept {
  // Published, then checked: a key that began to wait meanwhile either
  // sees these idle lanes (and asks for one) or is seen here.
  boxes_.note_idle(i, n);
  return n > 0 && slot_wanted();
}

bool key_table::claim_retire() noexcept {
  // A shard may retire an idle lane for a waiting key: the cap is full and
  // fewer retires are under way for waiting keys than keys wait. Two
  // shards that both saw `slot_wanted` would otherwise each retire a lane
  // for one key. (Claims do not lower the bar on `active_`: a claimed
  // retire frees one slot for one key, so while more keys wait than
  // claims, other shards retire too.)
  auto claimed = retire_claims_.load(std::memory_order_seq_cst);
  for (;;) {
    if (waiting() <= claimed || !slot_wanted())
      return false;
    if (retire_claims_.compare_exchange_weak(claimed, claimed + 1,
                                             std::memory_order_seq_cst))
      return true;
  }
}

bool key_table::take_reclaim() noexcept {
  auto cur = reclaim_.load(std::memory_order_seq_cst);
  while (cur > 0)
    if (reclaim_.compare_exchange_weak(cur, cur - 1,
                                       std::memory_order_seq_cst))
      return true;
  return false;
}

void key_table::set_cap(size_t n) {
  cap_.store(n, std::memory_order_seq_cst);
  // Lanes above a lowered cap are not killed: lingering ones retire now,
  // running ones when they run dry, and no key starts until below it.
  auto active = active_.load(std::memory_order_seq_cst);
  reclaim_.store(active > n ? active - n : 0, std::memory_order_seq_cst);
  admit_waiting(); // a raised cap has room for waiting keys
  boxes_.ask_all_shards();
}

bool key_table::retire_round::wanted() noexcept {
  claimed_ = t_.claim_retire();
  return claimed_ || t_.take_reclaim();
}

void key_table::retire_round::settle(bool gone) {
  if (gone)
    t_.boxes_.lane_gone(shard_);
  if (!std::exchange(claimed_, false)) {
    if (gone) {
      t_.release_cap();
      freed_ = true;
    }
    return;
  }
  if (gone) {
    // Its slot stays taken, for the oldest waiting key: the count never
    // goes down and up, and no other shard sees a free slot meanwhile.
    if (++kept_ == admit_batch)
      hand_on();
    return;
  }
  // The lane stayed (an event came): another shard that stood back for
  // this claim is asked again.
  t_.end_retire_claims(1);
  t_.admit_waiting();
}

void key_table::retire_round::hand_on() {
  if (kept_ == 0)
    return;
  t_.admit_waiting(kept_);
  t_.end_retire_claims(std::exchange(kept_, 0));
}

void key_table::retire_round::finish() {
  hand_on();
  if (std::exchange(freed_, false))
    t_.admit_waiting();
}

} // namespace keylane::detail
