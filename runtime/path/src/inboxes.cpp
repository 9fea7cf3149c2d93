// SPDX-License-Identifier: Apache-2.0
#include "keylane/detail/inboxes.hpp"

#include <caf/all.hpp>

#include "keylane/detail/messages.hpp"

namespace keylane::detail {

inboxes::inboxes(size_t shards) {
  for (auto& t : tokens_)
    t = std::make_unique<producer_token>(queue_);
  for (size_t i = 0; i < shards; ++i) {
    auto box = std::make_unique<shard_inbox>();
    for (auto& t : box->tokens)
      t = std::make_unique<producer_token>(box->events);
    shards_.push_back(std::move(box));
  }
}

event_ptr inboxes::open(const inbox_item& item) const {
  if (item.ev != nullptr)
    return event_ptr{item.ev};
  auto ev = inline_event_(key{item.key}, item.payload);
  ev->seq = item.seq;
  ev->submitted = item.submitted;
  ev->lane = item.lane;
  return ev;
}

void inboxes::to_lane(uint32_t shard, uint64_t lane, size_t stripe,
                      event_ptr ev) {
  ev->lane = lane;
  ev->parked_behind = false;
  inbox_item item;
  item.ev = ev.release();
  to_shard(shard, stripe, item);
}

uint32_t inboxes::place() noexcept {
  // The shard with the least work: the events it holds unfinished (a hot
  // key's queue counts in full, so cold keys go elsewhere and both cores
  // stay busy) plus its lanes.
  uint32_t best = 0;
  uint64_t best_score = UINT64_MAX;
  for (uint32_t i = 0; i < shards_.size(); ++i) {
    auto& box = *shards_[i];
    auto score = box.load.load(std::memory_order_relaxed)
                 + box.lanes.load(std::memory_order_relaxed);
    if (score < best_score) {
      best = i;
      best_score = score;
    }
  }
  shards_[best]->lanes.fetch_add(1, std::memory_order_relaxed);
  return best;
}

void inboxes::wake_shard(size_t i) {
  // Pairs with the fence in `rearm_shard`: either the shard sees our item
  // in its drain, or we see the flag cleared and signal it again.
  auto& box = *shards_[i];
  std::atomic_thread_fence(std::memory_order_seq_cst);
  if (box.signalled.load(std::memory_order_relaxed))
    return;
  if (!box.signalled.exchange(true, std::memory_order_acq_rel))
    caf::anon_send(box.actor, inbox_atom::value);
}

void inboxes::rearm_shard(size_t i) noexcept {
  shards_[i]->signalled.store(false, std::memory_order_relaxed);
  std::atomic_thread_fence(std::memory_order_seq_cst);
}

void inboxes::wake_supervisor() {
  // As `wake_shard`, with `rearm_supervisor` on the other side.
  std::atomic_thread_fence(std::memory_order_seq_cst);
  if (signalled_.load(std::memory_order_relaxed))
    return;
  if (!signalled_.exchange(true, std::memory_order_acq_rel))
    caf::anon_send(supervisor_, drain_atom::value);
}

void inboxes::rearm_supervisor() noexcept {
  signalled_.store(false, std::memory_order_relaxed);
  std::atomic_thread_fence(std::memory_order_seq_cst);
}

void inboxes::ask_for_idle_lanes() {
  for (auto& box : shards_) {
    if (box->idle.load(std::memory_order_seq_cst) == 0)
      continue;
    if (box->reclaim_signalled.load(std::memory_order_relaxed))
      continue;
    if (!box->reclaim_signalled.exchange(true, std::memory_order_acq_rel))
      caf::anon_send(box->actor, reclaim_atom::value);
  }
}

void inboxes::ask_all_shards() {
  for (auto& box : shards_)
    if (box->actor)
      caf::anon_send(box->actor, reclaim_atom::value);
}

void inboxes::rearm_reclaim(size_t i) noexcept {
  shards_[i]->reclaim_signalled.store(false, std::memory_order_relaxed);
  std::atomic_thread_fence(std::memory_order_seq_cst);
}

uint64_t inboxes::depth() const noexcept {
  uint64_t n = queue_.size_approx();
  for (auto& box : shards_)
    n += box->events.size_approx();
  return n;
}

std::vector<event_ptr> inboxes::detach_all() {
  supervisor_ = nullptr;
  std::vector<event_ptr> left;
  event_base* p = nullptr;
  while (queue_.try_dequeue(p))
    left.emplace_back(p);
  for (auto& box : shards_) {
    box->actor = nullptr;
    inbox_item item;
    while (box->events.try_dequeue(item)) {
      if (item.is_transfer()) { // an idle lane no shard took: nothing in it
        auto t = lane_transfer::of(item);
        t.drop(t.lane);
        continue;
      }
      left.push_back(open(item));
    }
  }
  return left;
}

} // namespace keylane::detail
