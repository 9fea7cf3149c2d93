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
  } else {
    if (shed_.on)
      shed_.dry.push_back(idle_lane{l.id(), now});
    if (!l.listed()) {
      l.list(true);
      idle_.lanes.push_back(idle_lane{l.id(), now});
    }
  }
  return now;
}

namespace {

// Far more than the least busy shard: twice its unfinished events and a
// little more, so two shards about as busy do not pass lanes to and fro.
constexpr uint64_t shed_margin = 256;

void drop_lane(void* l) noexcept {
  delete static_cast<lane*>(l); // dry: nothing in it to hand on
}

} // namespace

void shard::shed() {
  auto dry = std::move(shed_.dry);
  shed_.dry.clear();
  shed_.on = false;
  auto& boxes = parts_.boxes;
  auto mine = load();
  if (!parts_.cfg.move_idle_lanes || boxes.shard_count() < 2
      || mine <= shed_margin)
    return;
  uint64_t least = UINT64_MAX;
  for (uint32_t i = 0; i < boxes.shard_count(); ++i)
    if (auto load = boxes.load_of(i); i != index_ && load < least) {
      least = load;
      shed_.to = i;
    }
  if (mine <= 2 * least + shed_margin)
    return;
  shed_.on = true; // lanes that run dry next round go
  for (auto& x : dry) {
    auto i = lanes_.find(x.id);
    if (i == lanes_.end())
      continue;
    auto* l = i->second.get();
    if (l->dry_since() != x.since || !l->movable())
      continue;
    auto k = l->k(); // the lane is the other shard's once it is sent
    auto moved = parts_.keys.move(k, x.id, index_, shed_.to,
                                  l->take_unreleased(), [&](uint64_t id) {
      i.value().release();
      return lane_transfer::item(id, lane_transfer{l, &drop_lane});
    });
    if (moved != 0) {
      lanes_.erase(x.id);
      ++shed_.moved;
    }
  }
  dry.clear();
  shed_.dry.swap(dry); // its capacity, for the next round
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
