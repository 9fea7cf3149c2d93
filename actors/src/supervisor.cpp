#include "keylane/detail/supervisor.hpp"

#include <algorithm>
#include <exception>

#include <caf/all.hpp>

#include "keylane/detail/counters.hpp"
#include "keylane/detail/ingress.hpp"
#include "keylane/detail/live_settings.hpp"
#include "keylane/detail/logger.hpp"
#include "keylane/detail/memory_release.hpp"
#include "keylane/detail/stop_ledger.hpp"
#include "keylane/park_store.hpp"
#include "keylane/detail/lane.hpp"

namespace keylane::detail {

supervisor::supervisor(caf::actor_config& cfg, const runtime_parts& parts,
                       caf::actor sink,
                       handler_factory make, handler_params params,
                       std::vector<key> parked)
  : caf::event_based_actor(cfg),
    parts_(parts),
    sink_(std::move(sink)),
    maker_(std::make_shared<handler_maker>(std::move(make), std::move(params))),
    live_(parts.live.get()),
    cap_(live_->max_active_keys),
    ingress_batch_(parts.cfg.ingress_batch),
    linger_(parts.cfg.lane_linger_ms) {
  parts_.ledger.actor_started();
  buf_.resize(256);
  for (auto& k : parked)
    parked_.insert(std::move(k));
}

caf::behavior supervisor::make_behavior() {
  auto self = caf::actor_cast<caf::actor>(this);
  send(sink_, supervisor_atom::value, self);
  auto n = parts_.in.shard_count();
  for (size_t i = 0; i < n; ++i) {
    shards_.push_back(
      spawn<shard>(parts_, self, sink_, static_cast<uint32_t>(i), maker_));
    parts_.in.attach_shard(i, shards_.back());
  }
  shard_lanes_.assign(n, 0);
  outbox_.resize(n);
  // Every handler ends with `post`: what it told the shards goes out as one
  // message per shard.
  return {
    [this](drain_atom) {
      drain();
      post();
    },
    [this](idle_atom, shard_report_ptr& r) {
      on_report(*r);
      post();
    },
    [this](parked_atom, const key& k) { parked_.insert(k); },
    [this](trim_atom, uint64_t spawned) { on_trim(spawned); },
    [this](linger_atom) {
      on_linger_timer();
      post();
    },
    [this](reload_atom, settings_ptr& live) {
      reconfigure(std::move(live));
      post();
    },
    [this](locate_atom, uint64_t seq) { locate(seq); },
    [this](replay_atom, const key& k, op_reply& reply) {
      operate(true, k, std::move(reply));
      post();
    },
    [this](discard_atom, const key& k, op_reply& reply) {
      operate(false, k, std::move(reply));
      post();
    },
  };
}

shard_op& supervisor::op_for(uint32_t shard, shard_op::kind what,
                             uint64_t lane) {
  auto& w = outbox_[shard];
  if (!w)
    w = std::make_shared<shard_work>();
  auto& op = w->ops.emplace_back();
  op.what = what;
  op.lane = lane;
  return op;
}

void supervisor::post() {
  for (size_t i = 0; i < outbox_.size(); ++i)
    if (outbox_[i])
      send(shards_[i], events_atom::value, std::move(outbox_[i]));
}

void supervisor::on_report(shard_report& r) {
  // Refusals first: a refused lane's fresh idle notice may follow.
  for (auto& [k, lane] : r.refused)
    on_refused(k, lane);
  for (auto& n : r.idle)
    on_idle(n.k, n.lane, n.finished);
  for (auto& k : r.retired)
    on_retired(k);
  // The parks of every key that retired here, in one transaction.
  write_parked();
  deliver_parked();
  if (!r.refused.empty())
    reclaim(); // waiting keys still need the slots the refusals kept
}

void supervisor::on_refused(const key& k, uint64_t lane) {
  auto i = keys_.find(k);
  if (i == keys_.end())
    return;
  auto& e = *i->second;
  if (e.st != state::retiring || e.lane != lane)
    return;
  e.st = state::running;
  --retiring_;
  if (e.pending && !e.pending->items.empty()) {
    // What came while we thought it retiring goes to the lane after all.
    e.forwarded += e.pending->items.size();
    op_for(e.shard, shard_op::kind::events, e.lane).events =
      std::move(e.pending);
  }
}

void supervisor::drain() {
  parts_.in.rearm();
  size_t total = 0;
  while (total < ingress_batch_) {
    auto want = std::min(buf_.size(), ingress_batch_ - total);
    auto n = parts_.in.dequeue(buf_.data(), want);
    if (n == 0)
      break;
    // Ingress is FIFO per producer queue only: where keys may compete for
    // slots, route oldest first, so slots go in submission order.
    if (!waiting_.empty() || active_ + n > cap_)
      std::sort(buf_.begin(), buf_.begin() + static_cast<std::ptrdiff_t>(n),
                [](const event_base* a, const event_base* b) {
                  return a->seq < b->seq;
                });
    for (size_t i = 0; i < n; ++i)
      route(event_ptr{buf_[i]});
    total += n;
  }
  write_parked();
  deliver_parked();
  flush_touched();
  reclaim();
  // More may be waiting: come back after other messages (idle, retired) had
  // their turn, so retiring lanes free their slots promptly.
  if (total == ingress_batch_)
    send(this, drain_atom::value);
  publish();
}

void supervisor::route(event_ptr ev) {
  if (!parked_.empty() && parked_.count(ev->k) != 0
      && keys_.count(ev->k) == 0) {
    // Parked and no lane: nobody else writes this key to the store now.
    ev->error = parked_behind_reason;
    to_park_.push_back(std::move(ev));
    return;
  }
  auto [i, fresh] = keys_.try_emplace(ev->k);
  if (fresh) {
    i.value() = std::make_unique<entry>();
    i.value()->k = ev->k;
  }
  auto& e = *i->second;
  if (!e.pending)
    e.pending = std::make_shared<event_batch>(&parts_.ledger, "queued");
  e.pending->items.push_back(std::move(ev));
  if (fresh) {
    if (active_ < cap_) {
      e.st = state::running;
    } else {
      e.st = state::waiting;
      waiting_.push(e.pending->items.front()->seq, i->first);
      return;
    }
  }
  e.lingering = false; // it has work again (no-op for other states)
  if (e.st == state::running && !e.touched) {
    e.touched = true;
    touched_.push_back(&e);
    if (!e.lane)
      ++active_; // counted now, so later keys in this drain see the cap
  }
}

void supervisor::flush_touched() {
  for (auto* e : touched_) {
    e->touched = false;
    if (!e->lane) {
      --active_; // start_lane counts it again
      start_lane(e->k, *e);
    } else {
      e->forwarded += e->pending->items.size();
      op_for(e->shard, shard_op::kind::events, e->lane).events =
        std::move(e->pending);
    }
  }
  touched_.clear();
}

void supervisor::start_lane(const key& k, entry& e) {
  trimmed_ = false;
  auto a = std::make_unique<lane::args>();
  a->k = k;
  a->handler = maker_->make(a->handler_error, a->retry_activation);
  a->maker = maker_.get();
  e.forwarded = e.pending->items.size();
  a->first = std::move(e.pending);
  a->cfg = live_;
  a->id = lane::next_id();
  ++active_;
  ++spawned_;
  if (active_ > peak_)
    peak_ = active_;
  // Published before the lane starts, so whoever sees an output of this
  // lane sees the lane counted.
  publish();
  // The shard with the least work: the events it holds unfinished (a hot
  // key's queue counts in full, so cold keys go elsewhere and both cores
  // stay busy) plus its lanes. A key's activations may land on different
  // shards, never two at once (the next starts after the previous one
  // retired).
  size_t best = 0;
  uint64_t best_score = UINT64_MAX;
  for (size_t i = 0; i < shard_lanes_.size(); ++i) {
    auto score = parts_.in.shard_load(i) + shard_lanes_[i];
    if (score < best_score) {
      best = i;
      best_score = score;
    }
  }
  e.shard = static_cast<uint32_t>(best);
  ++shard_lanes_[best];
  e.lane = a->id;
  op_for(e.shard, shard_op::kind::start, e.lane).start = std::move(a);
  e.st = state::running;
}

void supervisor::on_idle(const key& k, uint64_t lane, uint64_t finished) {
  auto i = keys_.find(k);
  if (i == keys_.end())
    return;
  auto& e = *i->second;
  // A notice of an earlier activation of the key (a shard's report may
  // come late) says nothing about the current lane.
  if (e.st != state::running || e.lane != lane)
    return;
  // Events sent but not yet seen by the lane: it will wake up for them.
  if (e.forwarded != finished || (e.pending && !e.pending->items.empty()))
    return;
  if (linger_.count() > 0 && waiting_.empty() && active_ <= cap_
      && parked_.count(k) == 0) {
    e.lingering = true;
    e.linger_gen = ++linger_gen_;
    e.idle_since = std::chrono::steady_clock::now();
    lingering_.emplace_back(i->first, e.linger_gen);
    arm_linger_timer();
    return;
  }
  retire_lane(e);
}

void supervisor::retire_lane(entry& e) {
  e.lingering = false;
  e.st = state::retiring;
  ++retiring_;
  op_for(e.shard, shard_op::kind::retire, e.lane);
}

void supervisor::reclaim() {
  // One lingering lane per waiting key that no retiring lane will serve,
  // and every lane above a cap that a reload lowered.
  auto need = [this] {
    return waiting_.size() + (active_ > cap_ ? active_ - cap_ : 0);
  };
  while (retiring_ < need() && !lingering_.empty()) {
    auto [k, gen] = std::move(lingering_.front());
    lingering_.pop_front();
    auto i = keys_.find(k);
    if (i != keys_.end() && i->second->lingering
        && i->second->linger_gen == gen)
      retire_lane(*i->second);
  }
}

void supervisor::arm_linger_timer() {
  if (linger_timer_ || lingering_.empty())
    return;
  linger_timer_ = true;
  delayed_send(this, linger_, linger_atom::value);
}

void supervisor::on_linger_timer() {
  linger_timer_ = false;
  auto now = std::chrono::steady_clock::now();
  while (!lingering_.empty()) {
    auto& [k, gen] = lingering_.front();
    auto i = keys_.find(k);
    if (i == keys_.end() || !i->second->lingering
        || i->second->linger_gen != gen) {
      lingering_.pop_front();
      continue;
    }
    if (now - i->second->idle_since < linger_)
      break; // the rest went idle later
    lingering_.pop_front();
    retire_lane(*i->second);
  }
  arm_linger_timer();
  publish();
}

void supervisor::on_retired(const key& k) {
  auto i = keys_.find(k);
  if (i == keys_.end())
    return;
  auto& e = *i->second;
  --active_;
  ++retired_;
  --retiring_;
  --shard_lanes_[e.shard];
  e.lane = 0;
  e.forwarded = 0;
  if (parked_.count(k) != 0) {
    // Its lane parked; what came meanwhile is parked behind, here.
    if (e.pending)
      for (auto& ev : e.pending->items) {
        ev->error = parked_behind_reason;
        to_park_.push_back(std::move(ev));
      }
    auto ops = std::move(e.ops);
    keys_.erase(i);
    // Written by on_report with the round's other parks (or by a replay or
    // discard below, which writes whatever is pending first).
    for (auto& [replay, reply] : ops)
      operate(replay, k, std::move(reply));
  } else if (e.pending && !e.pending->items.empty()) {
    // Events arrived while it retired: wait for a slot again, placed by
    // the oldest of them.
    e.st = state::waiting;
    waiting_.push(e.pending->items.front()->seq, i->first);
  } else {
    keys_.erase(i);
  }
  admit();
  publish();
}

void supervisor::admit() {
  while (active_ < cap_ && !waiting_.empty()) {
    auto k = waiting_.pop();
    auto i = keys_.find(k);
    if (i == keys_.end() || i->second->st != state::waiting)
      continue;
    start_lane(i->first, *i->second);
  }
  reclaim();
}

void supervisor::reconfigure(settings_ptr live) {
  live_ = std::move(live);
  cap_ = live_->max_active_keys;
  // Lanes above a lowered cap are not killed: lingering ones retire now,
  // running ones when they run dry, and no key starts until below the cap.
  admit(); // and reclaim
  publish();
}

void supervisor::on_trim(uint64_t spawned) {
  trim_armed_ = false;
  if (!keys_.empty())
    return; // publish arms it again once no key is left
  if (!to_park_.empty() || spawned != spawned_) {
    // Lanes came and went meanwhile, or parks are being written: wait
    // again (no publish may follow to arm it).
    trim_armed_ = true;
    delayed_send(this, release_after, trim_atom::value, spawned_);
    return;
  }
  trimmed_ = true;
  shrink_if_empty(keys_);
  if (waiting_.empty())
    waiting_.release();
  std::vector<entry*>{}.swap(touched_);
  std::vector<event_ptr>{}.swap(to_park_);
  std::deque<std::pair<key, uint64_t>>{}.swap(lingering_);
  written_ = 0;
  release_free_memory();
  if (parts_.log.enabled(log_level::debug))
    parts_.log.write(log_level::debug, "idle: the supervisor gave memory back");
}

void supervisor::publish() {
  if (keys_.empty() && !trim_armed_ && !trimmed_) {
    trim_armed_ = true;
    delayed_send(this, release_after, trim_atom::value, spawned_);
  }
  auto& c = parts_.pub;
  c.active_lanes.store(active_, std::memory_order_relaxed);
  c.peak_active_lanes.store(peak_, std::memory_order_relaxed);
  c.waiting_keys.store(waiting_.size(), std::memory_order_relaxed);
  c.lanes_spawned.store(spawned_, std::memory_order_relaxed);
  c.lanes_retired.store(retired_, std::memory_order_relaxed);
  c.replayed.store(replayed_, std::memory_order_relaxed);
}

void supervisor::on_exit() {
  // Work not yet posted holds events: its batches hand them to the stop ledger
  // as they die.
  outbox_.clear();
  for (auto& s : shards_)
    caf::anon_send_exit(s, caf::exit_reason::user_shutdown);
  shards_.clear();
  for (auto& [k, e] : keys_)
    if (e->pending)
      for (auto& ev : e->pending->items)
        parts_.ledger.abandon(std::move(ev), "queued");
  for (auto& ev : to_park_)
    parts_.ledger.abandon(std::move(ev), "queued");
  to_park_.clear();
  keys_.clear(); // unanswered operator calls see their promise break
  waiting_.clear();
  touched_.clear();
  sink_ = nullptr;
  maker_ = nullptr;
  parts_.ledger.actor_stopped();
}

} // namespace keylane::detail
