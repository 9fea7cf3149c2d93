// SPDX-License-Identifier: Apache-2.0
// A shard's idle lanes and their retire: after the linger, at once when
// the linger is 0 or the lane parks, and at once while keys wait for a
// slot of the cap. Whether a lane may go, and what becomes of its slot of
// the cap, is the key table's verdict (key_table::retire_round).

#include "keylane/detail/shard.hpp"

#include <algorithm>

#include <caf/all.hpp>

#include "keylane/detail/counters.hpp"
#include "keylane/detail/key_table.hpp"
#include "keylane/detail/state_service.hpp"

namespace keylane::detail {

clock::time_point shard::idle(lane& l) {
  // The linger is in ms: the round's clock will do.
  auto now = round_time();
  if (l.held() && !l.parking())
    return now; // its handler keeps it: not a candidate until released
  if (idle_.linger.count() == 0 || l.parking()) {
    idle_.retire_now.push_back(idle_lane{l.id(), now});
  } else if (!l.listed()) {
    l.list(true);
    idle_.lanes.push_back(idle_lane{l.id(), now});
  }
  return now;
}

bool shard::retire(lane& l, key_table::retire_round& round) {
  l.retire();
  // The key's next lane, on any shard, loads the state this one left.
  if (!state_.out.empty())
    parts_.state.stage(std::exchange(state_.out, state_round{}));
  auto id = l.id();
  auto k = l.k();
  auto v = round.retire(k, id, l.take_unreleased(), [&] {
    parts_.pub.lanes_retired.fetch_add(1, std::memory_order_relaxed);
    lanes_.erase(id); // destroys l
  });
  if (v == key_table::verdict::stays)
    return false; // an event is on its way: the lane wakes up for it
  if (v == key_table::verdict::gone_parked)
    report_->parked.push_back(std::move(k));
  return true;
}

void shard::retire_due(bool sweep) {
  key_table::retire_round round{parts_.keys, index_};
  for (auto& x : idle_.retire_now) {
    auto* l = find(x.id);
    if (l != nullptr && l->dry() && l->dry_since() == x.since)
      (void) retire(*l, round);
  }
  idle_.retire_now.clear();
  // While keys wait with the cap full (or lanes exceed a lowered cap), the
  // longest idle lanes retire now, each keeping its slot for a waiting key;
  // else those past the linger (the timer's sweep).
  auto now = sweep ? clock::now() : clock::time_point{};
  while (!idle_.lanes.empty()) {
    auto x = idle_.lanes.front();
    auto* l = find(x.id);
    if (l == nullptr) { // retired meanwhile (parking, a stop)
      idle_.lanes.pop_front();
      continue;
    }
    if (!l->dry() || l->dry_since() == clock::time_point{}
        || (l->held() && !l->parking())) {
      // Busy, or kept by its handler: it is listed again once it runs dry
      // (or is released and runs).
      l->list(false);
      idle_.lanes.pop_front();
      continue;
    }
    if (l->dry_since() != x.since) {
      // Ran dry again since it was listed: to the back, at that time. The
      // list stays nearly in time order: a lane may retire up to one linger
      // late, never early.
      idle_.lanes.pop_front();
      idle_.lanes.push_back(idle_lane{x.id, l->dry_since()});
      continue;
    }
    if (!(sweep && now - x.since >= idle_.linger) && !round.wanted())
      break;
    idle_.lanes.pop_front();
    l->list(false); // a lane that stays (an event is on its way) lists again
    (void) retire(*l, round);
  }
}

void shard::arm_linger() {
  if (idle_.linger_armed || idle_.lanes.empty())
    return;
  idle_.linger_armed = true;
  auto due = idle_.lanes.front().since + idle_.linger - clock::now();
  delayed_send(this,
               std::max<clock::duration>(due, std::chrono::milliseconds(1)),
               linger_atom::value);
}

} // namespace keylane::detail
