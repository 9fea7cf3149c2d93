// SPDX-License-Identifier: Apache-2.0
// The key table's routes: where an admitted event goes, a retiring lane's
// verdict, parking and replay. The cap and the waiting keys are in
// key_table_cap.cpp; docs/architecture.md draws the whole protocol.

#include "keylane/detail/key_table.hpp"

#include <algorithm>

namespace keylane::detail {

key_table::key_table(size_t key_backlog, size_t cap, inboxes& boxes)
  : backlog_(key_backlog), boxes_(boxes), cap_(cap) {
}

key_table::route key_table::place(const key& k, backlog::slot& s,
                                  event_ptr ev, bool past_cap) {
  route r;
  if (s.lane_ == 0 && !s.held_) {
    start_or_wait(k, s, past_cap, r);
  } else if (s.lane_ == 0 && past_cap && !s.parked_) {
    // The key waits for a slot: an ask starts it now, its held events
    // first. Its entry stays in the queue; admission skips it.
    overdraw_cap();
    open_lane(k, s);
    send_held(k, s);
    r.kind = route::jumped;
  }
  if (s.lane_ != 0) {
    if (r.kind != route::jumped)
      r.kind = route::lane;
    r.shard = s.shard_;
    boxes_.to_lane(s.shard_, s.lane_, stripe_of(k), std::move(ev));
  } else if (s.parked_) {
    ev->parked_behind = true;
    boxes_.to_supervisor(stripe_of(k), std::move(ev));
    r.kind = route::parked;
  } else {
    s.hold(std::move(ev));
  }
  return r;
}

void key_table::after(const route& r) {
  switch (r.kind) {
    case route::lane:
      boxes_.wake_shard(r.shard);
      break;
    case route::jumped:
      boxes_.wake_shard(r.shard);
      // The entry left in the queue counts as a waiting key: with a slot
      // free, nobody else would look at the queue behind it.
      admit_waiting();
      break;
    case route::first_waiter:
      // A slot may have come free meanwhile, with nobody left to hand it
      // on (the retiring shard saw no key waiting); else idle lanes give
      // theirs up.
      admit_waiting();
      break;
    case route::parked:
      boxes_.wake_supervisor();
      break;
    case route::none:
      break;
  }
}

void key_table::open_lane(const key& k, backlog::slot& s) {
  // A key's activations may land on different shards, never two at once
  // (the next starts after the previous one cleared the route).
  s.shard_ = boxes_.place();
  s.lane_ = backlog_.name_lane(k);
  s.held_ = false;
}

void key_table::send_held(const key& k, backlog::slot& s) {
  auto* ev = s.take_held();
  while (ev != nullptr) {
    auto* next = std::exchange(ev->next, nullptr);
    boxes_.to_lane(s.shard_, s.lane_, stripe_of(k), event_ptr{ev});
    ev = next;
  }
}

key_table::verdict key_table::close(const key& k, uint64_t lane,
                                    size_t done) {
  return backlog_.find(k, [&](backlog::slot* xp) {
    if (xp == nullptr)
      return verdict::gone; // not routed to it (cannot happen)
    auto& x = *xp;
    backlog_.release_locked(k, x, done);
    if (x.lane_ != lane)
      return verdict::gone; // as above
    // A lane retires only while its key's count is zero: then no event of
    // the key is on its way to it.
    if (x.count_ != 0)
      return verdict::stays;
    x.lane_ = 0;
    x.held_ = x.parked_;
    return x.parked_ ? verdict::gone_parked : verdict::gone;
  });
}

void key_table::park(const key& k) {
  backlog_.locked(k, [](backlog::slot& s) {
    s.parked_ = true;
    if (s.lane_ == 0)
      s.held_ = true;
  });
}

key_table::park_state key_table::parked(const key& k) {
  return backlog_.find(k, [](backlog::slot* s) {
    return s == nullptr ? park_state{false, false}
                        : park_state{s->parked_, s->lane_ != 0};
  });
}

key_table::route key_table::revived(const key& k, backlog::slot& s,
                                    std::vector<event_ptr>& evs) {
  // Accepted once already: past the key's backlog limit on purpose.
  s.count_ += evs.size();
  s.parked_ = false;
  route r;
  if (evs.empty()) {
    s.held_ = false;
  } else if (start_or_wait(k, s, false, r)) {
    for (auto& ev : evs)
      boxes_.to_lane(s.shard_, s.lane_, stripe_of(k), std::move(ev));
  } else {
    for (auto& ev : evs)
      s.hold(std::move(ev));
    r.kind = route::first_waiter; // look for a slot, first or not
  }
  evs.clear();
  return r;
}

std::optional<key_table::held_event> key_table::find_held(uint64_t seq) {
  std::optional<held_event> found;
  backlog_.for_each([&](const key& k, backlog::slot& s) {
    for (auto* ev = s.held_first_; ev != nullptr && !found; ev = ev->next)
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

void key_table::purge_idle() {
  backlog_.purge();
  std::lock_guard<spin_mutex> guard{wait_mtx_};
  if (wait_keys_.empty()) // a burst of waiting keys pins no memory after it
    std::deque<key>{}.swap(wait_keys_);
}

void key_table::close() {
  closed_.store(true, std::memory_order_seq_cst);
  backlog_.wake_all();
}

std::vector<event_ptr> key_table::take_all_held() {
  std::vector<event_ptr> left;
  backlog_.for_each([&](const key&, backlog::slot& s) {
    for (auto* ev = s.take_held(); ev != nullptr;) {
      auto* next = std::exchange(ev->next, nullptr);
      left.emplace_back(ev);
      ev = next;
    }
  });
  std::lock_guard<spin_mutex> guard{wait_mtx_};
  wait_keys_.clear();
  waiting_.store(0, std::memory_order_seq_cst);
  return left;
}

} // namespace keylane::detail
