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

namespace keylane::detail {

supervisor::supervisor(caf::actor_config& cfg, const runtime_parts& parts,
                       caf::actor sink, handler_maker_ptr maker,
                       std::vector<caf::actor> shards,
                       std::vector<key> parked)
  : caf::event_based_actor(cfg),
    parts_(parts),
    sink_(std::move(sink)),
    maker_(std::move(maker)),
    live_(parts.live.get()),
    ingress_batch_(parts.cfg.ingress_batch),
    shards_(std::move(shards)) {
  parts_.ledger.actor_started();
  buf_.resize(256);
  // Keys the store holds parked: their events go to the supervisor (to
  // park behind) from the first one on.
  for (auto& k : parked) {
    parts_.in.with_key_locked(k, [](backlog::slot& s) {
      s.held = s.parked = true;
    });
    parked_.insert(std::move(k));
  }
}

caf::behavior supervisor::make_behavior() {
  return {
    [this](drain_atom) { drain(); },
    [this](idle_atom, shard_report_ptr& r) { on_report(*r); },
    [this](parked_atom, const key& k) { parked_.insert(k); },
    [this](trim_atom, uint64_t spawned) { on_trim(spawned); },
    [this](reload_atom, settings_ptr& live) { reconfigure(std::move(live)); },
    [this](locate_atom, uint64_t seq) { locate(seq); },
    [this](replay_atom, const key& k, op_reply& reply) {
      operate(true, k, std::move(reply));
    },
    [this](discard_atom, const key& k, op_reply& reply) {
      operate(false, k, std::move(reply));
    },
  };
}

void supervisor::on_report(shard_report& r) {
  if (r.freed)
    reclaim_asked_ = false;
  for (auto& k : r.parked) {
    // Its lane is gone and every event it parked is stored: the operator
    // calls that waited for that run now.
    auto i = deferred_.find(k);
    if (i == deferred_.end())
      continue;
    auto ops = std::move(i.value());
    deferred_.erase(i);
    for (auto& [replay, reply] : ops)
      operate(replay, k, std::move(reply));
  }
  admit();
}

void supervisor::drain() {
  parts_.in.rearm();
  size_t total = 0;
  while (total < ingress_batch_) {
    auto want = std::min(buf_.size(), ingress_batch_ - total);
    auto n = parts_.in.dequeue(buf_.data(), want);
    if (n == 0)
      break;
    // Ingress is FIFO per producer queue only: keys compete for slots
    // here, so take them oldest first and slots go in submission order.
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
  admit();
  // More may be waiting: come back after other messages (retires) had
  // their turn.
  if (total == ingress_batch_)
    send(this, drain_atom::value);
}

void supervisor::route(event_ptr ev) {
  trimmed_ = false;
  if (ev->parked_behind) {
    // Parked and no lane: nobody else writes this key to the store now.
    ev->error = parked_behind_reason;
    to_park_.push_back(std::move(ev));
    return;
  }
  auto [i, fresh] = keys_.try_emplace(ev->k);
  if (fresh) {
    i.value() = std::make_unique<entry>();
    i.value()->k = ev->k;
    waiting_.push(ev->seq, ev->k);
  }
  i.value()->pending.push_back(std::move(ev));
}

void supervisor::admit() {
  bool full = false;
  while (!waiting_.empty()) {
    auto k = waiting_.pop();
    auto i = keys_.find(k);
    if (i == keys_.end())
      continue; // cannot happen: each waiting key has an entry
    if (!parts_.in.take_cap()) {
      waiting_.push(i->second->pending.front()->seq, std::move(k));
      full = true;
      break;
    }
    auto e = std::move(i.value());
    keys_.erase(i);
    start(*e);
  }
  // One idle lane per key still waiting (and per lane above a lowered
  // cap) should give its slot up now.
  auto active = parts_.in.active();
  auto cap = parts_.in.cap();
  parts_.in.want_reclaimed(waiting_.size() + (active > cap ? active - cap : 0));
  if (full)
    ask_reclaim();
  publish();
}

void supervisor::start(entry& e) {
  trimmed_ = false;
  uint32_t shard = 0;
  parts_.in.with_key_locked(e.k, [&](backlog::slot& s) {
    // What of the key is still in ingress goes first (no new event of it
    // enters meanwhile; they go to the lane once this returns).
    auto n = parts_.in.dequeue_of(e.k, buf_.data(), buf_.size());
    while (n > 0) {
      for (size_t j = 0; j < n; ++j) {
        event_ptr ev{buf_[j]};
        if (ev->k == e.k)
          e.pending.push_back(std::move(ev));
        else
          route(std::move(ev));
      }
      n = parts_.in.dequeue_of(e.k, buf_.data(), buf_.size());
    }
    shard = parts_.in.open_lane(s);
    bool first = true;
    for (auto& ev : e.pending) {
      parts_.in.send_to_lane(s, std::move(ev), first);
      first = false;
    }
  });
  parts_.in.end_wait();
  parts_.in.wake_shard(shard);
}

void supervisor::ask_reclaim() {
  // The shards retire their longest idle lanes, one per waiting key; once
  // per slot that came free, not once per drain.
  if (reclaim_asked_)
    return;
  reclaim_asked_ = true;
  for (auto& s : shards_)
    send(s, reclaim_atom::value);
}

void supervisor::reconfigure(settings_ptr live) {
  live_ = std::move(live);
  // Lanes above a lowered cap are not killed: lingering ones retire now,
  // running ones when they run dry, and no key starts until below the cap.
  parts_.in.set_cap(live_->max_active_keys);
  admit();
  reclaim_asked_ = false;
  for (auto& s : shards_)
    send(s, reclaim_atom::value);
}

void supervisor::on_trim(uint64_t spawned) {
  trim_armed_ = false;
  auto now = parts_.pub.lanes_spawned.load(std::memory_order_relaxed);
  if (!keys_.empty())
    return; // publish arms it again once no key is left
  if (!to_park_.empty() || spawned != now) {
    // Lanes came and went meanwhile, or parks are being written: wait
    // again (no publish may follow to arm it).
    trim_armed_ = true;
    delayed_send(this, release_after, trim_atom::value, now);
    return;
  }
  trimmed_ = true;
  shrink_if_empty(keys_);
  waiting_.release();
  std::vector<event_ptr>{}.swap(to_park_);
  written_ = 0;
  release_free_memory();
  if (parts_.log.enabled(log_level::debug))
    parts_.log.write(log_level::debug, "idle: the supervisor gave memory back");
}

void supervisor::publish() {
  if (keys_.empty() && !trim_armed_ && !trimmed_) {
    trim_armed_ = true;
    delayed_send(this, release_after, trim_atom::value,
                 parts_.pub.lanes_spawned.load(std::memory_order_relaxed));
  }
  auto& c = parts_.pub;
  c.waiting_keys.store(waiting_.size(), std::memory_order_relaxed);
  c.replayed.store(replayed_, std::memory_order_relaxed);
}

void supervisor::on_exit() {
  for (auto& s : shards_)
    caf::anon_send_exit(s, caf::exit_reason::user_shutdown);
  shards_.clear();
  for (auto& [k, e] : keys_)
    for (auto& ev : e->pending)
      parts_.ledger.abandon(std::move(ev), "queued");
  for (auto& ev : to_park_)
    parts_.ledger.abandon(std::move(ev), "queued");
  to_park_.clear();
  keys_.clear();
  deferred_.clear(); // unanswered operator calls see their promise break
  waiting_.clear();
  sink_ = nullptr;
  maker_ = nullptr;
  parts_.ledger.actor_stopped();
}

} // namespace keylane::detail
