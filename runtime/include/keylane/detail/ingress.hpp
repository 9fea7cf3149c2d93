// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include <caf/actor.hpp>

#include "keylane/config.hpp"
#include "keylane/detail/backlog.hpp"
#include "keylane/detail/event_base.hpp"
#include "keylane/detail/inbox_item.hpp"
#include "keylane/detail/mpmc_queue.hpp"
#include "keylane/detail/spin_mutex.hpp"
#include "keylane/detail/waiter.hpp"
#include "keylane/errc.hpp"

namespace keylane::detail {

/// Where accepted events enter: the admission window, the per-key backlog
/// (which routes each key), sequence numbers, the cap on live lanes, the
/// keys waiting for a slot of it, the supervisor's queue (events of parked
/// keys), and one inbox per shard for the events of its lanes.
///
/// A key's event goes to its live lane; a key with no lane starts one on
/// the spot when the cap has room and no key waits for a slot, taking the
/// slot with one atomic; otherwise the key waits: its events stay in its
/// backlog slot, in order, and the key joins the waiting keys in arrival
/// order. Whoever frees a slot (a shard retiring a lane) or finds one free
/// after a key began to wait hands it to the oldest waiting key at once
/// (`admit_waiting`): no actor is on that path either.
///
/// Thread-safety: `submit` and the credit calls may run on any thread at
/// once; the supervisor alone takes from its queue and each shard alone
/// from its inbox. A key's events are enqueued under the key's backlog
/// stripe lock, each stripe through its own producer token, so they leave
/// every queue in sequence-number order (moodycamel is FIFO per token);
/// different keys' events interleave in no defined order.
class ingress {
public:
  /// Builds an event for `submit`; `ctx` is the caller's state.
  using make_fn = event_ptr (*)(void* ctx);

  /// What `submit` did: `code == errc::none` and a sequence number, or an
  /// error and nothing taken.
  struct admission {
    errc code;
    uint64_t seq;
  };

  ingress(size_t key_backlog, size_t window, size_t shards, size_t cap,
          waiter& w);

  /// How events of a small payload travel to a live lane by value (both
  /// null: always as an event); set before the first `submit`.
  void set_inline(void (*fill)(void* ctx, void* bytes),
                  event_ptr (*build)(const key& k, const void* bytes)) {
    inline_fill_ = fill;
    inline_event_ = build;
  }

  /// The event of an inbox item, built now if it came by value.
  [[nodiscard]] event_ptr open(const inbox_item& item) const;

  /// Takes a window credit and a backlog slot for `k` — waiting for them
  /// if `may_wait`, else refusing — then builds the event with `make` and
  /// enqueues it under `k`'s stripe lock: to `k`'s lane (started now if it
  /// has none and may start), or to the supervisor. `make` runs only if
  /// the event is accepted; if it throws, nothing was taken and the
  /// exception propagates. `force` (a message between keys, bounded by
  /// `detail::messaging` instead) takes the credit and the backlog slot
  /// even past their limits, and never travels by value. `past_cap` (an
  /// ask: its sender holds a slot until answered) starts `k`'s lane even
  /// when the cap is full or keys wait, a waiting `k` included, so askers
  /// that fill the cap never wait for their own targets.
  admission submit(const key& k, make_fn make, void* ctx, bool may_wait,
                   bool force = false, bool past_cap = false);

  /// Refuses new events from now on and returns once every `submit` in
  /// progress has enqueued or given up.
  void close();

  /// The supervisor, which `submit` wakes for events of held keys.
  void attach_supervisor(caf::actor a) { supervisor_ = std::move(a); }

  /// Makes `a` the shard actor that events routed to shard `i` wake.
  void attach_shard(size_t i, caf::actor a) {
    inboxes_[i]->actor = std::move(a);
  }

  // -- keys waiting for a slot of the cap ----------------------------------------

  /// Makes the key of `s` wait for a slot (under its lock, with no lane):
  /// its events go to `s` from now on, until `admit_waiting` starts it.
  /// True if no other key waited: then only the caller is sure to look
  /// for a slot for it (`find_slot`). Otherwise whoever admits the keys
  /// ahead of it looks again after taking them, so a caller may skip it.
  bool begin_wait(backlog::slot& s, const key& k);

  /// Adds `ev` to the events the waiting key of `s` holds (under its lock).
  void hold(backlog::slot& s, event_ptr ev) noexcept {
    s.hold(std::move(ev));
  }

  /// After a key began to wait (no lock held): starts it or another waiting
  /// key if a slot is free, else asks shards with idle lanes for one.
  void find_slot() { admit_waiting(); }

  /// Starts the oldest waiting keys while the cap has room: takes slots,
  /// names lanes, sends each key's held events to its lane. Any thread, no
  /// lock held. Returns at once if no key waits or no slot is free.
  /// `holding`: the caller hands over that many slots of the cap it kept
  /// from retires (see `lane_gone`), for the oldest waiting keys. Keys are
  /// taken from the queue up to `admit_batch` at a time, under one lock.
  void admit_waiting(size_t holding = 0);

  /// Most waiting keys one `admit_waiting` takes from the queue at once.
  static constexpr size_t admit_batch = 64;

  /// Keys waiting for a slot now.
  [[nodiscard]] size_t waiting() const noexcept {
    return waiting_.load(std::memory_order_seq_cst);
  }

  /// Keys wait and the cap is full: idle lanes should give their slot up.
  [[nodiscard]] bool slot_wanted() const noexcept {
    return waiting() > 0
           && active_.load(std::memory_order_seq_cst)
                >= cap_.load(std::memory_order_relaxed);
  }

  /// Where the waiting event `seq` is, for the stall log: its key and how
  /// many keys wait ahead of it, or nothing if no key holds it.
  struct held_event {
    keylane::key k;
    clock::time_point submitted;
    size_t ahead;
  };
  [[nodiscard]] std::optional<held_event> find_held(uint64_t seq);

  /// Drops the actor handles (they are ending) and returns every event
  /// still queued anywhere.
  std::vector<event_ptr> detach_all();

  // -- the supervisor's queue -------------------------------------------------

  /// Clears the "supervisor was signalled" flag before draining.
  void rearm() noexcept;

  /// Takes up to `max` events.
  size_t dequeue(event_base** buf, size_t max) {
    return queue_.try_dequeue_bulk(buf, max);
  }

  /// Takes up to `max` events from the stripe that carries `k`'s events
  /// (call under `with_key_locked(k)` to empty it of `k`).
  size_t dequeue_of(const key& k, event_base** buf, size_t max);

  // -- shard inboxes -----------------------------------------------------------

  /// Clears shard `i`'s "signalled" flag before it takes its inbox.
  void rearm_inbox(size_t i) noexcept;

  /// Shard `i` holds `n` idle lanes (published after each round): while
  /// keys wait, a key that begins to wait wakes it to give them up.
  void note_idle_lanes(size_t i, size_t n) noexcept {
    inboxes_[i]->idle.store(n, std::memory_order_seq_cst);
  }

  /// Shard `i` was asked to retire idle lanes and has not begun to.
  [[nodiscard]] bool reclaim_asked(size_t i) const noexcept {
    return inboxes_[i]->reclaim_signalled.load(std::memory_order_seq_cst);
  }

  /// Clears shard `i`'s "asked to retire idle lanes" flag before it does.
  void rearm_reclaim(size_t i) noexcept;

  /// Takes up to `max` events sent straight to lanes of shard `i`.
  size_t dequeue_inbox(size_t i, inbox_item* buf, size_t max) {
    return inboxes_[i]->events.try_dequeue_bulk(buf, max);
  }

  /// Shard `i` holds `n` events it has not finished (published once per
  /// round; new lanes are placed by it).
  void note_shard_load(size_t i, uint64_t n) noexcept {
    inboxes_[i]->load.store(n, std::memory_order_relaxed);
  }

  /// How many shards (and inboxes) there are.
  [[nodiscard]] size_t shard_count() const noexcept { return inboxes_.size(); }


  // -- backlog -----------------------------------------------------------------

  /// Drops the backlog's unused slots and an empty waiting queue's memory
  /// (a shard went idle).
  void purge_idle();

  /// Returns `n` backlog slots of `k` (events of `k` completed).
  void release_backlog(const key& k, size_t n) { backlog_.release(k, n); }

  /// Clears `k`'s route to its retiring lane `lane` (see
  /// `backlog::close_route`).
  [[nodiscard]] bool close_route(const key& k, uint64_t lane, bool parked,
                                 size_t done) {
    return backlog_.close_route(k, lane, parked, done);
  }

  /// Runs `fn(slot&)` with no event of `k` entering meanwhile (see
  /// `backlog::locked`).
  template <class F>
  decltype(auto) with_key_locked(const key& k, F&& fn) {
    return backlog_.locked(k, std::forward<F>(fn));
  }

  // -- lanes and the cap ---------------------------------------------------------

  /// Takes a slot of the cap if one is free.
  [[nodiscard]] bool take_cap() noexcept { return take_caps(1) == 1; }

  /// Takes up to `want` slots of the cap, as many as are free.
  [[nodiscard]] size_t take_caps(size_t want) noexcept;

  /// Takes a slot past the cap (`submit`'s `past_cap`): lanes retire down
  /// to the cap as they run dry, as after a lowered cap.
  void overdraw_cap() noexcept;

  /// Starts a lane for `k`, whose slot is `s` (under the key's lock, with a
  /// slot of the cap taken): a fresh id, on the shard with the least work.
  /// Returns the shard; the key's events go to the lane from now on.
  uint32_t open_lane(const key& k, backlog::slot& s);

  /// Sends `ev` to the live lane of `s` (under the key's lock). Wake the
  /// shard after unlocking.
  void send_to_lane(backlog::slot& s, event_ptr ev);

  /// Shard `i` erased a lane: its slot of the cap is free, unless the
  /// shard `keeps` it for a waiting key (then it calls `admit_waiting`
  /// holding it: the slot changes hands without the shared count going
  /// down and up).
  void lane_gone(size_t i, bool keeps) noexcept;

  /// Slots the supervisor wants freed now (lanes above a lowered cap):
  /// shards retire one idle lane per `take_reclaim`.
  void want_reclaimed(size_t n) noexcept {
    reclaim_.store(n, std::memory_order_seq_cst);
  }
  /// A shard may retire an idle lane for a waiting key: the cap is full
  /// and fewer retires are under way for waiting keys than keys wait. Two
  /// shards that both saw `slot_wanted` would otherwise each retire a lane
  /// for one key. (Claims do not lower the bar on `active_`: a claimed
  /// retire frees one slot for one key, so while more keys wait than
  /// claims, other shards retire too.) Pair with `end_retire_claim`.
  [[nodiscard]] bool claim_retire() noexcept {
    auto claimed = retire_claims_.load(std::memory_order_seq_cst);
    for (;;) {
      if (waiting() <= claimed || !slot_wanted())
        return false;
      if (retire_claims_.compare_exchange_weak(claimed, claimed + 1,
                                               std::memory_order_seq_cst))
        return true;
    }
  }
  /// The retires claimed ended (their slots went to waiting keys, or the
  /// lanes stayed).
  void end_retire_claim(size_t n = 1) noexcept {
    retire_claims_.fetch_sub(n, std::memory_order_seq_cst);
  }
  [[nodiscard]] bool take_reclaim() noexcept {
    auto cur = reclaim_.load(std::memory_order_seq_cst);
    while (cur > 0)
      if (reclaim_.compare_exchange_weak(cur, cur - 1,
                                         std::memory_order_seq_cst))
        return true;
    return false;
  }

  /// Sets the cap (a reload); lanes above a lowered one retire when dry.
  void set_cap(size_t n) noexcept { cap_.store(n, std::memory_order_seq_cst); }
  [[nodiscard]] size_t cap() const noexcept {
    return cap_.load(std::memory_order_relaxed);
  }
  /// Slots of the cap taken now, and the most taken at once so far.
  [[nodiscard]] size_t active() const noexcept {
    return active_.load(std::memory_order_relaxed);
  }
  [[nodiscard]] size_t peak_active() const noexcept {
    return peak_.load(std::memory_order_relaxed);
  }

  /// Wakes shard `i` for its inbox.
  void wake_shard(size_t i);

  // -- window credit -------------------------------------------------------------

  /// Gives replayed events new sequence numbers and window credit (under
  /// `with_key_locked`, so newer events of their key get higher ones).
  void accept_replayed(std::vector<event_ptr>& evs);

  /// Returns the credit of `n` delivered (or forgotten) events; wakes
  /// blocked producers if that made room.
  void credit(size_t n);

  /// Sets the window; blocked producers go on at once if it grew.
  void resize_window(size_t n);

  /// Stops admitting (a zero window) or admits again without a bound.
  void hold_admission(bool hold) { resize_window(hold ? 0 : unbounded); }

  /// The window in force.
  [[nodiscard]] size_t window() const noexcept {
    return window_.load(std::memory_order_relaxed);
  }

  /// Events accepted so far (the next sequence number).
  [[nodiscard]] uint64_t accepted() const noexcept {
    return next_seq_.load(std::memory_order_acquire);
  }

  /// `submit` calls refused so far.
  [[nodiscard]] uint64_t rejected() const noexcept {
    return rejected_.load(std::memory_order_relaxed);
  }

  /// Events accepted that no shard has taken yet, not counting those a
  /// waiting key holds (approximate).
  [[nodiscard]] uint64_t depth() const noexcept;

private:
  bool take_credit();
  void wake_supervisor();
  void release_cap(size_t n = 1) noexcept {
    active_.fetch_sub(n, std::memory_order_seq_cst);
  }
  // Moves up to `max` of the oldest waiting keys to `out`.
  size_t pop_waiting(std::vector<key>& out, size_t max);
  void ask_for_idle_lanes();

  // Producers bump these on every submit: each on its own cache line.
  alignas(64) std::atomic<uint64_t> next_seq_{0};
  alignas(64) std::atomic<uint64_t> in_flight_{0};
  alignas(64) std::atomic<size_t> window_;
  alignas(64) std::atomic<bool> signalled_{false};
  alignas(64) std::atomic<bool> closed_{false};
  std::atomic<size_t> cap_; // read-mostly, beside `closed_`
  // The cap: slots taken (`active_`, and the most at once), keys waiting
  // for one (`waiting_`, the size of `wait_keys_`, changed under
  // `wait_mtx_`: the three move together, so they share a line).
  alignas(64) std::atomic<size_t> active_{0};
  std::atomic<size_t> peak_{0};
  alignas(64) std::atomic<size_t> waiting_{0};
  spin_mutex wait_mtx_; // taken after a key's stripe lock, never before
  std::deque<key> wait_keys_;
  // Shards only (retires), off the lines producers write.
  alignas(64) std::atomic<size_t> retire_claims_{0}; // see claim_retire
  std::atomic<size_t> reclaim_{0};
  // Submits in progress: `close` waits for them to enqueue or give up.
  alignas(64) std::atomic<int> inside_submit_{0};
  std::atomic<uint64_t> rejected_{0};
  waiter& waiter_;

  backlog backlog_;
  mpmc_queue<event_base*> queue_;
  // One token per backlog stripe, used under that stripe's lock.
  std::array<std::unique_ptr<producer_token>, backlog::shard_count> tokens_;
  // Set when payloads may travel by value (see `set_inline`).
  void (*inline_fill_)(void* ctx, void* bytes) = nullptr;
  event_ptr (*inline_event_)(const key& k, const void* bytes) = nullptr;
  // Per shard: the events `submit` sends straight to its lanes, with one
  // token per backlog stripe (FIFO per key, as above) and the flag that
  // saves a wake-up message while one is pending.
  struct shard_inbox {
    mpmc_queue<inbox_item> events;
    std::array<std::unique_ptr<producer_token>, backlog::shard_count> tokens;
    alignas(64) std::atomic<bool> signalled{false};
    alignas(64) std::atomic<uint64_t> load{0}; // written once per round
    std::atomic<uint64_t> lanes{0};            // its live lanes
    std::atomic<size_t> idle{0};               // of them, idle (per round)
    std::atomic<bool> reclaim_signalled{false};
    caf::actor actor;
  };
  std::vector<std::unique_ptr<shard_inbox>> inboxes_;
  caf::actor supervisor_;
};

} // namespace keylane::detail
