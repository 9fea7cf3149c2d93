// SPDX-License-Identifier: Apache-2.0
// A shard's idle lanes and their retire: after the linger, at once when
// the linger is 0 or the lane parks, and at once while keys wait for a
// slot of the cap (each retire hands its slot to the oldest waiting key).
// See docs/architecture.md for the route protocol these steps keep.

#include "keylane/detail/shard.hpp"

#include <algorithm>

#include <caf/all.hpp>

#include "keylane/detail/counters.hpp"
#include "keylane/detail/ingress.hpp"
#include "keylane/detail/state_service.hpp"

namespace keylane::detail {

uint64_t shard::idle(const lane& l) {
  auto mark = ++idle_marks_;
  if (l.held() && !l.parking())
    return mark; // its handler keeps it: not a candidate until released
  if (linger_.count() == 0 || l.parking())
    retire_now_.push_back(idle_lane{l.id(), mark, {}});
  else
    idle_.push_back(idle_lane{l.id(), mark, round_time()}); // the linger is ms
  return mark;
}

bool shard::retire(lane& l, bool keep_slot) {
  l.retire();
  // The key's next lane, on any shard, loads the state this one left.
  if (!state_out_.empty())
    parts_.state.stage(std::exchange(state_out_, state_round{}));
  if (!parts_.in.close_route(l.k(), l.id(), l.parking(), l.take_unreleased()))
    return false; // an event is on its way: the lane wakes up for it
  if (l.parking())
    report_->parked.push_back(l.k());
  parts_.pub.lanes_retired.fetch_add(1, std::memory_order_relaxed);
  lanes_.erase(l.id()); // destroys l
  parts_.in.lane_gone(index_, keep_slot);
  return true;
}

void shard::retire_due(bool sweep) {
  auto live = [this](const idle_lane& x) -> lane* {
    auto* l = find(x.id);
    return l != nullptr && l->dry() && l->idle_mark() == x.mark ? l : nullptr;
  };
  bool freed = false;
  for (auto& x : retire_now_)
    if (auto* l = live(x))
      freed = retire(*l, false) || freed;
  retire_now_.clear();
  // Slots kept from claimed retires go to the oldest waiting keys in
  // batches (one pass over the waiting queue for many keys); their claims
  // end only then, so other shards stand back for those keys meanwhile.
  size_t kept = 0;
  auto hand_on = [&] {
    if (kept == 0)
      return;
    parts_.in.admit_waiting(kept);
    parts_.in.end_retire_claim(std::exchange(kept, 0));
  };
  // While keys wait with the cap full (or lanes exceed a lowered cap), the
  // longest idle lanes retire now, each keeping its slot for a waiting key;
  // else those past the linger (the timer's sweep).
  auto now = sweep ? clock::now() : clock::time_point{};
  while (!idle_.empty()) {
    auto x = idle_.front();
    auto* l = live(x);
    if (l == nullptr) {
      idle_.pop_front();
      continue;
    }
    bool claimed = false;
    if (!(sweep && now - x.since >= linger_)) {
      claimed = parts_.in.claim_retire();
      if (!claimed && !parts_.in.take_reclaim())
        break;
    }
    idle_.pop_front();
    bool gone = retire(*l, claimed);
    if (claimed && gone) {
      if (++kept == ingress::admit_batch)
        hand_on();
    } else if (claimed) {
      // The lane stayed (an event came): another shard that stood back
      // for this claim is asked again.
      parts_.in.end_retire_claim();
      parts_.in.find_slot();
    } else {
      freed = freed || gone;
    }
  }
  hand_on();
  if (freed)
    parts_.in.admit_waiting();
}

void shard::arm_linger() {
  if (linger_armed_ || idle_.empty())
    return;
  linger_armed_ = true;
  auto due = idle_.front().since + linger_ - clock::now();
  delayed_send(this,
               std::max<clock::duration>(due, std::chrono::milliseconds(1)),
               linger_atom::value);
}

} // namespace keylane::detail
