// SPDX-License-Identifier: Apache-2.0
#include "keylane/detail/shard.hpp"

#include <algorithm>

#include <caf/all.hpp>

#include "keylane/detail/counters.hpp"
#include "keylane/detail/inboxes.hpp"
#include "keylane/detail/key_table.hpp"
#include "keylane/detail/live_settings.hpp"
#include "keylane/detail/logger.hpp"
#include "keylane/detail/memory_release.hpp"
#include "keylane/detail/messaging.hpp"
#include "keylane/detail/output.hpp"
#include "keylane/detail/park_service.hpp"
#include "keylane/detail/state_service.hpp"
#include "keylane/detail/stop_ledger.hpp"

namespace keylane::detail {

namespace {

// Bounds of a held park group: the events it may gather, and how long its
// oldest one may wait for the shard's mailbox to run dry. An fsync takes
// about a millisecond here; holding a little longer turns a flood of small
// rounds into a few large transactions without delaying a quiet shard.
constexpr size_t park_group_max = 16384;
constexpr auto park_hold = std::chrono::milliseconds(5);

} // namespace

shard::shard(caf::actor_config& cfg, const shard_parts& parts,
             caf::actor sink, uint32_t index, handler_maker_ptr maker)
  : caf::event_based_actor(cfg),
    parts_(parts),
    index_(index),
    sink_(std::move(sink)),
    maker_(std::move(maker)) {
  idle_.linger = std::chrono::milliseconds(parts.cfg.lane_linger_ms);
  parts_.ledger.watch(*this);
  out_ = std::make_shared<event_batch>(&parts_.ledger, "completed");
  report_ = std::make_shared<shard_report>();
  inbox_buf_.resize(1024);
}

shard::~shard() = default;

caf::behavior shard::make_behavior() {
  return {
    [this](supervisor_atom, caf::actor& a) { supervisor_ = std::move(a); },
    [this](reclaim_atom) {
      // Keys wait for a slot of the cap: retire what is dry (end_round).
      parts_.boxes.rearm_reclaim(index_);
      end_round();
    },
    [this](linger_atom) {
      idle_.linger_armed = false;
      idle_.sweep_due = true;
      end_round();
    },
    [this](inbox_atom) {
      take_inbox();
      end_round();
    },
    [this](complete_atom, uint64_t id, uint64_t token, uint8_t status,
           bool permanent, std::string& error, result_box_ptr& box) {
      if (auto* l = find(id))
        l->on_complete(token, static_cast<outcome>(status), permanent,
                       std::move(error), std::move(box));
      end_round();
    },
    [this](timeout_atom, uint64_t generation) {
      if (generation == timers_.generation)
        timers_.armed = false;
      sweep_timeouts();
      end_round();
    },
    [this](timer_atom, uint64_t id, uint64_t timer) {
      if (id == 0) // no lane has id 0: the wake-up of held parks
        parks_.wakeup_armed = false;
      else if (auto* l = find(id))
        l->on_timer(timer);
      end_round();
    },
    [this](answer_atom, uint64_t id, uint64_t ask, uint8_t status,
           std::string& error, result_box_ptr& box) {
      if (auto* l = find(id))
        l->on_answer(ask, static_cast<outcome>(status), std::move(error),
                     std::move(box));
      end_round();
    },
    [this](trim_atom, uint64_t starts) {
      trim_.armed = false;
      if (!lanes_.empty())
        return; // end_round arms it again once the shard is empty
      if (starts != trim_.starts) {
        // Lanes came and went meanwhile: idle since, so wait again (no
        // end_round may follow to arm it).
        trim_.armed = true;
        delayed_send(this, release_after, trim_atom::value, trim_.starts);
        return;
      }
      trim_.done = true;
      shrink_if_empty(lanes_);
      std::vector<uint64_t>{}.swap(turns_);
      std::vector<lane*>{}.swap(touched_);
      std::deque<idle_lane>{}.swap(idle_.lanes);
      std::vector<idle_lane>{}.swap(idle_.retire_now);
      parts_.keys.purge_idle(); // the slots its lanes' keys left behind
      release_free_memory();
      if (parts_.log.enabled(log_level::debug))
        parts_.log.write(log_level::debug, "idle: shard "
                                             + std::to_string(index_)
                                             + " gave memory back");
    },
    [this](resume_atom) {
      turn_pending_ = false;
      take_turns();
      end_round();
    },
    [this](checkpoint_atom) {
      state_.checkpoint_armed = false;
      auto dirty = std::move(state_.dirty);
      state_.dirty.clear();
      for (auto id : dirty)
        if (auto* l = find(id))
          l->checkpoint();
      end_round();
    },
    [this](locate_atom, uint64_t seq) {
      for (auto& [id, l] : lanes_)
        l->locate(seq);
    },
  };
}

void shard::refresh_settings(uint64_t gen) {
  // One lock and shared count per reload and shard, not per activation:
  // lanes borrow these (see lane::policy).
  settings_ = parts_.live.get();
  settings_gen_ = gen;
}

lane* shard::find(uint64_t id) {
  auto i = lanes_.find(id);
  return i == lanes_.end() ? nullptr : i->second.get();
}

lane* shard::start_lane(uint64_t id, const keylane::key& k) {
  ++trim_.starts;
  trim_.done = false;
  ++spawned_;
  auto l = std::make_unique<lane>(this, id, k, maker_.get());
  auto* raw = l.get();
  lanes_.emplace(id, std::move(l));
  return raw;
}

void shard::adopt(const inbox_item& item) {
  auto* l = static_cast<lane*>(lane_transfer::of(item).lane);
  lanes_.emplace(item.lane, std::unique_ptr<lane>(l));
  ++trim_.starts;
  trim_.done = false;
  l->rehost(this, item.lane);
}

void shard::take_inbox() {
  parts_.boxes.rearm_shard(index_);
  auto n = parts_.boxes.take_shard(index_, inbox_buf_.data(), inbox_buf_.size());
  taken_ += n;
  // A lane cannot retire or move while an event sent to it is on its way
  // (see key_table::retire_round and move), so each event finds its lane
  // here, or starts it; a lane that moves here comes ahead of its key's
  // next events.
  lane* last = nullptr;
  for (size_t i = 0; i < n; ++i) {
    if (inbox_buf_[i].is_transfer()) {
      --taken_; // a lane, not an event
      adopt(inbox_buf_[i]);
      continue;
    }
    auto ev = parts_.boxes.open(inbox_buf_[i]);
    if (last == nullptr || last->id() != ev->lane) {
      last = find(ev->lane);
      if (last == nullptr)
        last = start_lane(ev->lane, ev->k);
    }
    if (last->take(std::move(ev)))
      touched_.push_back(last);
  }
  for (auto* l : touched_)
    l->run_taken();
  touched_.clear();
  // More may wait: after the other messages in the mailbox had their turn.
  behind_ = n == inbox_buf_.size() ? n : 0;
  if (behind_ != 0)
    send(this, inbox_atom::value);
}

void shard::take_turns() {
  auto turns = std::move(turns_);
  turns_.clear();
  for (auto id : turns)
    if (auto* l = find(id))
      l->take_turn();
}

bool shard::hold_parks() {
  // Messages waiting may park more: write them all at once, after the last
  // of them, unless the group is large or old enough already.
  return !parks_.events.empty() && !mailbox().empty()
         && parks_.events.size() < park_group_max
         && clock::now() - parks_.since < park_hold;
}

void shard::write_parks() {
  if (parks_.events.empty())
    return;
  // One transaction for the whole group; each key's events in their order.
  if (!parts_.parks.park(parks_.events.data(), parks_.events.size())) {
    // Stopping with a store that refuses them: not parked, not delivered;
    // stop lists them (and keeps them, if the store works by then).
    for (auto& ev : parks_.events)
      parts_.ledger.abandon(std::move(ev), "completed");
    parks_.events.clear();
    return;
  }
  for (size_t i = 0, j = 0; i < parks_.events.size(); i = j) {
    const auto& k = parks_.events[i]->k;
    for (j = i + 1; j < parks_.events.size() && parks_.events[j]->k == k; ++j) {
    }
    parts_.keys.ended(k, j - i);
  }
  finished_ += parks_.events.size();
  for (auto& ev : parks_.events) {
    parts_.msg.ended(*ev);
    stage(std::move(ev));
  }
  parks_.events.clear();
}

void shard::end_round() {
  round_time_valid_ = false;
  // Lane starts are counted once per round, before the round's outputs
  // leave (whoever sees an output sees its lane counted): two shards
  // bumping one shared counter per activation pass its cache line to and
  // fro.
  if (spawned_ != 0)
    parts_.pub.lanes_spawned.fetch_add(std::exchange(spawned_, 0),
                                       std::memory_order_relaxed);
  if (shed_.moved != 0)
    parts_.pub.lanes_moved.fetch_add(std::exchange(shed_.moved, 0),
                                     std::memory_order_relaxed);
  if (!state_.out.empty())
    parts_.state.stage(std::exchange(state_.out, state_round{}));
  auto hold = hold_parks();
  if (!hold) {
    write_parks();
  } else if (!parks_.wakeup_armed) {
    // Whatever the waiting messages are, the group is written by then.
    parks_.wakeup_armed = true;
    delayed_send(this, park_hold, timer_atom::value, uint64_t{0},
                 uint64_t{0});
  }
  parts_.boxes.note_load(index_, load());
  if (!out_->items.empty()) {
    if (parts_.cfg.order == order_mode::global) {
      auto next = std::make_shared<event_batch>(&parts_.ledger, "completed");
      send(sink_, events_atom::value, std::move(out_));
      out_ = std::move(next);
    } else {
      // Nothing to re-sequence: straight to the application, no sink hop.
      if (parts_.live.window_auto())
        send_measures();
      parts_.out.emit(out_->items, notes_, *parts_.pub.tallies[index_]);
    }
  }
  // After the outputs went: a key's next lane (on any shard) starts only
  // once this one retired, so its outputs follow these. Not while parks
  // are held: a parking lane retires once they are written.
  if (!hold) {
    retire_due(std::exchange(idle_.sweep_due, false));
    // Published, then checked again: a key that began to wait meanwhile
    // either sees these idle lanes (and asks for one) or is seen here.
    if (parts_.keys.idle_lanes(index_, idle_.lanes.size())) {
      retire_due(false);
      (void) parts_.keys.idle_lanes(index_, idle_.lanes.size());
    }
    arm_linger();
    shed();
  }
  if (!report_->empty()) {
    auto next = std::make_shared<shard_report>();
    send(supervisor_, parked_gone_atom::value, std::move(report_));
    report_ = std::move(next);
  }
  if (lanes_.empty() && !trim_.armed && !trim_.done) {
    trim_.armed = true;
    delayed_send(this, release_after, trim_atom::value, trim_.starts);
  }
  if (!turns_.empty() && !turn_pending_) {
    // Behind whatever is already in the mailbox: new work and completions
    // get their turn first.
    turn_pending_ = true;
    send(this, resume_atom::value);
  }
}

void shard::send_measures() {
  std::vector<int64_t> took;
  took.reserve(out_->items.size());
  auto now = clock::now();
  for (const auto& ev : out_->items)
    if (ev->started != clock::time_point{}) // parked behind: never ran
      took.push_back(std::chrono::duration_cast<std::chrono::nanoseconds>(
                       now - ev->started)
                       .count());
  if (!took.empty())
    send(sink_, measure_atom::value, std::move(took));
}

void shard::state_dirty(uint64_t lane) {
  state_.dirty.push_back(lane);
  if (state_.checkpoint_armed)
    return;
  state_.checkpoint_armed = true;
  delayed_send(this, std::chrono::milliseconds(parts_.cfg.state_checkpoint_ms),
               checkpoint_atom::value);
}

void shard::stage_state(state_round r) {
  for (auto& w : r.writes)
    state_.out.writes.push_back(std::move(w));
  for (auto s : r.seqs)
    state_.out.seqs.push_back(s);
  for (auto& ev : r.sends)
    state_.out.sends.push_back(std::move(ev));
  for (auto& d : r.delivered)
    state_.out.delivered.push_back(std::move(d));
}

void shard::withhold(const std::vector<uint64_t>& seqs) {
  auto& items = out_->items;
  for (auto i = items.begin(); i != items.end();) {
    if (std::find(seqs.begin(), seqs.end(), (*i)->seq) == seqs.end()) {
      ++i;
      continue;
    }
    parts_.ledger.abandon(std::move(*i), "completed");
    if (!notes_.empty())
      notes_.erase(notes_.begin() + (i - items.begin()));
    i = items.erase(i);
  }
}

void shard::finished(event_ptr ev) {
  parts_.msg.ended(*ev);
  ++finished_;
  stage(std::move(ev));
}

void shard::stage(event_ptr ev) {
  if (parts_.cfg.order != order_mode::global)
    notes_.push_back(outcome_note::of(*ev));
  out_->items.push_back(std::move(ev));
}

void shard::parked(const keylane::key& k) {
  parts_.keys.park(k);
}

void shard::park(std::vector<event_ptr>& evs) {
  if (parks_.events.empty())
    parks_.since = clock::now();
  for (auto& ev : evs)
    parks_.events.push_back(std::move(ev));
  evs.clear();
}

void shard::want_turn(uint64_t lane) {
  turns_.push_back(lane);
}


void shard::located(uint64_t seq, const keylane::key& k, std::string where,
                    int64_t submitted_ns) {
  send(sink_, located_atom::value, seq, k, std::move(where), submitted_ns);
}

void shard::on_exit() {
  for (auto& [id, l] : lanes_)
    l->abandon();
  lanes_.clear();
  // The state as of each key's last finished event, written before
  // `stop` returns.
  if (!state_.out.empty())
    parts_.state.stage(std::exchange(state_.out, state_round{}));
  // Ended but never written nor delivered: a durable store keeps them at
  // stop like any other undelivered event.
  for (auto& ev : parks_.events)
    parts_.ledger.abandon(std::move(ev), "completed");
  parks_.events.clear();
  if (out_)
    for (auto& ev : out_->items)
      parts_.ledger.abandon(std::move(ev), "completed");
  out_.reset();
  notes_.clear();
  report_.reset();
  supervisor_ = nullptr;
  sink_ = nullptr;
}

} // namespace keylane::detail
