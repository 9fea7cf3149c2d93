// SPDX-License-Identifier: Apache-2.0
#include "keylane/detail/supervisor.hpp"

#include <algorithm>
#include <exception>

#include <caf/all.hpp>

#include "keylane/detail/counters.hpp"
#include "keylane/detail/inboxes.hpp"
#include "keylane/detail/key_table.hpp"
#include "keylane/detail/live_settings.hpp"
#include "keylane/detail/logger.hpp"
#include "keylane/detail/memory_release.hpp"
#include "keylane/detail/messaging.hpp"
#include "keylane/detail/stop_ledger.hpp"
#include "keylane/park_store.hpp"

namespace keylane::detail {

supervisor::supervisor(caf::actor_config& cfg, const supervisor_parts& parts,
                       caf::actor sink,
                       std::vector<caf::actor> shards,
                       std::vector<key> parked)
  : caf::event_based_actor(cfg),
    parts_(parts),
    sink_(std::move(sink)),
    live_(parts.live.get()),
    ingress_batch_(parts.cfg.ingress_batch),
    shards_(std::move(shards)) {
  parts_.ledger.watch(*this);
  buf_.resize(256);
  // Keys the store holds parked: their events go to the supervisor (to
  // park behind) from the first one on.
  for (auto& k : parked)
    parts_.keys.park(k);
}

caf::behavior supervisor::make_behavior() {
  return {
    [this](drain_atom) { drain(); },
    [this](parked_gone_atom, shard_report_ptr& r) { on_report(*r); },
    [this](trim_atom, uint64_t spawned) { on_trim(spawned); },
    [this](reload_atom, settings_ptr& live) { reconfigure(std::move(live)); },
    [this](locate_atom, uint64_t seq) { locate(seq); },
    // Every tell_after timer fires here (messaging::arm_timer).
    [this](tell_timer_atom, uint64_t timer) { parts_.msg.fire_timer(timer); },
    [this](replay_atom, const key& k, op_reply& reply) {
      operate(true, k, std::move(reply));
    },
    [this](discard_atom, const key& k, op_reply& reply) {
      operate(false, k, std::move(reply));
    },
  };
}

void supervisor::on_report(shard_report& r) {
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
}

void supervisor::drain() {
  parts_.boxes.rearm_supervisor();
  size_t total = 0;
  while (total < ingress_batch_) {
    auto want = std::min(buf_.size(), ingress_batch_ - total);
    auto n = parts_.boxes.take_parked(buf_.data(), want);
    if (n == 0)
      break;
    for (size_t i = 0; i < n; ++i)
      route(event_ptr{buf_[i]});
    total += n;
  }
  write_parked();
  deliver_parked();
  publish();
  // More may be waiting: come back after other messages (retires) had
  // their turn.
  if (total == ingress_batch_)
    send(this, drain_atom::value);
}

void supervisor::route(event_ptr ev) {
  // Only events of parked keys with no lane come here: nobody else writes
  // this key to the store now.
  trimmed_ = false;
  ev->error = parked_behind_reason;
  to_park_.push_back(std::move(ev));
}

void supervisor::reconfigure(settings_ptr live) {
  // The cap is the key table's (`engine::reload` set it already).
  live_ = std::move(live);
  publish();
}

void supervisor::on_trim(uint64_t spawned) {
  trim_armed_ = false;
  auto now = parts_.pub.lanes_spawned.load(std::memory_order_relaxed);
  if (!to_park_.empty() || spawned != now) {
    // Lanes came and went meanwhile, or parks are being written: wait
    // again (no publish may follow to arm it).
    trim_armed_ = true;
    delayed_send(this, release_after, trim_atom::value, now);
    return;
  }
  trimmed_ = true;
  std::vector<event_ptr>{}.swap(to_park_);
  written_ = 0;
  release_free_memory();
  if (parts_.log.enabled(log_level::debug))
    parts_.log.write(log_level::debug, "idle: the supervisor gave memory back");
}

void supervisor::publish() {
  if (!trim_armed_ && !trimmed_) {
    trim_armed_ = true;
    delayed_send(this, release_after, trim_atom::value,
                 parts_.pub.lanes_spawned.load(std::memory_order_relaxed));
  }
  parts_.pub.replayed.store(replayed_, std::memory_order_relaxed);
}

void supervisor::on_exit() {
  for (auto& s : shards_)
    caf::anon_send_exit(s, caf::exit_reason::user_shutdown);
  shards_.clear();
  for (auto& ev : to_park_)
    parts_.ledger.abandon(std::move(ev), "queued");
  to_park_.clear();
  deferred_.clear(); // unanswered operator calls see their promise break
  sink_ = nullptr;
}

} // namespace keylane::detail
