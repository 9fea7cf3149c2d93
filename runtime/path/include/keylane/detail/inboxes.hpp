// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include <caf/actor.hpp>

#include "keylane/detail/event_base.hpp"
#include "keylane/detail/inbox_item.hpp"
#include "keylane/detail/mpmc_queue.hpp"
#include "keylane/key.hpp"

namespace keylane::detail {

/// The hand-off from producer threads to the actors: one inbox per shard
/// (the events of its lanes, a lane's first event starting it) and the
/// supervisor's queue (events of parked keys without a lane), each with
/// the flag that saves a wake-up message while one is pending, and what
/// the shards publish about themselves for placement (their unfinished
/// events, live lanes, idle lanes).
///
/// Ordering: producers enqueue under a key's stripe lock (see `key_table`)
/// through the token of that stripe (`stripe`), and moodycamel is FIFO per
/// token, so a key's events leave every queue in the order they entered.
/// Thread-safety: enqueue, wake and the placement reads from any thread;
/// each shard alone takes from its inbox and the supervisor alone from its
/// queue.
class inboxes {
public:
  /// Stripes of keys, each with its own producer token per queue.
  static constexpr size_t stripes = 64;

  explicit inboxes(size_t shards);

  /// How events of a small payload travel to a live lane by value (both
  /// null: always as an event); set before the first submit.
  void set_inline(void (*fill)(void* ctx, void* bytes),
                  event_ptr (*build)(const key& k, const void* bytes)) {
    inline_fill_ = fill;
    inline_event_ = build;
  }
  [[nodiscard]] bool by_value() const noexcept {
    return inline_fill_ != nullptr;
  }
  /// Fills `item`'s payload from a producer's `ctx` (see `set_inline`).
  void fill(void* ctx, inbox_item& item) const { inline_fill_(ctx, item.payload); }

  /// The event of an inbox item, built now if it came by value.
  [[nodiscard]] event_ptr open(const inbox_item& item) const;

  /// Makes `a` the shard actor that events for shard `i` wake.
  void attach_shard(size_t i, caf::actor a) { shards_[i]->actor = std::move(a); }
  /// The supervisor, woken for events of parked keys.
  void attach_supervisor(caf::actor a) { supervisor_ = std::move(a); }

  /// How many shards (and inboxes) there are.
  [[nodiscard]] size_t shard_count() const noexcept { return shards_.size(); }

  // -- producers (under the key's stripe lock) -----------------------------------

  /// Sends `ev` to lane `lane` on shard `shard`. Wake the shard after
  /// unlocking.
  void to_lane(uint32_t shard, uint64_t lane, size_t stripe, event_ptr ev);
  /// Sends an item built by value to shard `shard`.
  void to_shard(uint32_t shard, size_t stripe, const inbox_item& item) {
    auto& box = *shards_[shard];
    box.events.enqueue(*box.tokens[stripe], item);
  }
  /// Sends an event of a parked key to the supervisor.
  void to_supervisor(size_t stripe, event_ptr ev) {
    queue_.enqueue(*tokens_[stripe], ev.release());
  }

  /// Wakes shard `i` for its inbox (no lock held).
  void wake_shard(size_t i);
  /// Wakes the supervisor for its queue (no lock held).
  void wake_supervisor();

  // -- placement -------------------------------------------------------------------

  /// The shard with the least work for a new lane (its unfinished events
  /// plus its lanes), counting the lane in.
  [[nodiscard]] uint32_t place() noexcept;
  /// A lane of shard `i` is gone.
  void lane_gone(size_t i) noexcept {
    shards_[i]->lanes.fetch_sub(1, std::memory_order_relaxed);
  }
  /// A lane of shard `from` moved to shard `to`.
  void lane_moved(size_t from, size_t to) noexcept {
    shards_[from]->lanes.fetch_sub(1, std::memory_order_relaxed);
    shards_[to]->lanes.fetch_add(1, std::memory_order_relaxed);
  }
  /// The events shard `i` last said it holds unfinished (`note_load`).
  [[nodiscard]] uint64_t load_of(size_t i) const noexcept {
    return shards_[i]->load.load(std::memory_order_relaxed);
  }
  /// Shard `i` holds `n` events it has not finished (once per round).
  void note_load(size_t i, uint64_t n) noexcept {
    shards_[i]->load.store(n, std::memory_order_relaxed);
  }
  /// Shard `i` holds `n` idle lanes (published after each round).
  void note_idle(size_t i, size_t n) noexcept {
    shards_[i]->idle.store(n, std::memory_order_seq_cst);
  }
  /// Asks every shard that published idle lanes to retire them, once per
  /// question pending.
  void ask_for_idle_lanes();
  /// Shard `i` was asked to retire idle lanes and has not begun to.
  [[nodiscard]] bool reclaim_asked(size_t i) const noexcept {
    return shards_[i]->reclaim_signalled.load(std::memory_order_seq_cst);
  }
  /// Asks every shard to retire idle lanes (a lowered cap).
  void ask_all_shards();

  // -- consumers -------------------------------------------------------------------

  /// Clears shard `i`'s "signalled" flag before it takes its inbox.
  void rearm_shard(size_t i) noexcept;
  /// Clears shard `i`'s "asked to retire idle lanes" flag before it does.
  void rearm_reclaim(size_t i) noexcept;
  /// Takes up to `max` items of shard `i`.
  size_t take_shard(size_t i, inbox_item* buf, size_t max) {
    return shards_[i]->events.try_dequeue_bulk(buf, max);
  }
  /// Clears the supervisor's "signalled" flag before it drains.
  void rearm_supervisor() noexcept;
  /// Takes up to `max` events of parked keys.
  size_t take_parked(event_base** buf, size_t max) {
    return queue_.try_dequeue_bulk(buf, max);
  }
  /// Takes up to `max` events from the stripe that carries `k`'s (call
  /// under `k`'s stripe lock to empty it of `k`).
  size_t take_parked_of(size_t stripe, event_base** buf, size_t max) {
    return queue_.try_dequeue_bulk_from_producer(*tokens_[stripe], buf, max);
  }

  /// Events enqueued that no actor has taken yet (approximate).
  [[nodiscard]] uint64_t depth() const noexcept;

  /// Drops the actor handles (they are ending) and returns every event
  /// still queued.
  std::vector<event_ptr> detach_all();

private:
  using token_set = std::array<std::unique_ptr<producer_token>, stripes>;
  struct shard_inbox {
    mpmc_queue<inbox_item> events;
    token_set tokens;
    // Producers test and set it per batch; the shard clears it per round.
    alignas(64) std::atomic<bool> signalled{false};
    alignas(64) std::atomic<uint64_t> load{0}; // written once per round
    std::atomic<uint64_t> lanes{0};            // its live lanes
    std::atomic<size_t> idle{0};               // of them, idle (per round)
    std::atomic<bool> reclaim_signalled{false};
    caf::actor actor;
  };
  std::vector<std::unique_ptr<shard_inbox>> shards_;
  mpmc_queue<event_base*> queue_;
  token_set tokens_;
  alignas(64) std::atomic<bool> signalled_{false}; // the supervisor's
  caf::actor supervisor_;
  void (*inline_fill_)(void* ctx, void* bytes) = nullptr;
  event_ptr (*inline_event_)(const key& k, const void* bytes) = nullptr;
};

} // namespace keylane::detail
