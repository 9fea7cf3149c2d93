// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <optional>
#include <utility>
#include <vector>

#include "keylane/detail/backlog.hpp"
#include "keylane/detail/event_base.hpp"
#include "keylane/detail/inbox_item.hpp"
#include "keylane/detail/inboxes.hpp"
#include "keylane/detail/spin_mutex.hpp"
#include "keylane/key.hpp"

namespace keylane::detail {

/// The one owner of a key's life: its route (a live lane on shard S,
/// waiting for a slot of the cap, parked, or nothing), its count of
/// unfinished events, the events it holds while it waits, the cap on live
/// lanes and the waiting keys' arrival order. Every change of a key's life
/// is one of the verbs below; nothing else writes a slot (`backlog::slot`'s
/// fields are private to it).
///
///   admit     an event arrives: to the key's live lane; or a lane starts
///             (the cap has room and no key waits, or an ask goes past the
///             cap); or the key waits, its events held in order; or, parked,
///             to the supervisor, which parks it behind.
///   retire    a shard's verdict for its dry lane, inside a `retire_round`:
///             the lane goes (count zero: route cleared, cap slot freed or
///             kept for the oldest waiting key) or stays (an event is on
///             its way).
///   move      a shard hands a dry lane to a less busy shard (`move`): as
///             retire, only while no event of the key is on its way.
///   park      the key's lane parks its queue; the key stays parked after
///             the lane retires. `unpark` (discard) and `replay` end it.
///   set_cap   a reload: a raised cap admits waiting keys at once, lanes
///             above a lowered one retire when dry.
///
/// Locking: a key's slot is read and written under its stripe lock
/// (`backlog`); the waiting queue under `wait_mtx_`, taken after a stripe
/// lock, never before. The cap's atomics pair sequentially consistent
/// operations (docs/architecture.md): a key that begins to wait then looks
/// for a slot, and a retire that frees one then looks for a waiting key,
/// so one of the two always sees the other. Thread-safe: producers, shards
/// and the supervisor call it at once.
class key_table {
public:
  static_assert(backlog::shard_count == inboxes::stripes,
                "a stripe's lock guards its producer tokens");

  key_table(size_t key_backlog, size_t cap, inboxes& boxes);

  /// The stripe that carries `k`'s events (its producer tokens).
  [[nodiscard]] static size_t stripe_of(const key& k) noexcept {
    return backlog::shard_index(k);
  }

  // -- admit -----------------------------------------------------------------------

  /// How an event asks to be admitted.
  struct arrival {
    bool wait;       // wait for room in the key's backlog, else refuse
    bool force;      // past the key's backlog limit (a message)
    bool past_cap;   // an ask: start the lane even past the cap
    bool by_value;   // may travel by value to a live lane
    const std::atomic<bool>& cancelled; // stops a wait for room
  };

  /// Takes a slot of `k`'s backlog and routes one event, under `k`'s lock:
  /// to a live lane by value (`fill(inbox_item&)` fills seq, time, payload)
  /// if `a.by_value`, else as the event `make()` builds. If `make` throws,
  /// nothing was taken and the exception propagates. Returns false if the
  /// backlog had no room. Wakes whoever the event is for after unlocking.
  template <class Fill, class Make>
  bool admit(const key& k, const arrival& a, Fill&& fill, Make&& make) {
    route r;
    bool ok = backlog_.admit(k, a.wait, backlog::no_deadline, a.cancelled,
                             a.force, [&](backlog::slot& s) {
      if (a.by_value && s.lane_ != 0) {
        inbox_item item;
        item.ev = nullptr;
        item.lane = s.lane_;
        fill(item);
        boxes_.to_shard(s.shard_, stripe_of(k), item);
        r = route{route::lane, s.shard_};
        return;
      }
      r = place(k, s, make(), a.past_cap);
    });
    if (ok)
      after(r);
    return ok;
  }

  /// Gives back the backlog slots of `n` ended events of `k`.
  void ended(const key& k, size_t n) { backlog_.release(k, n); }

  // -- retire ----------------------------------------------------------------------

  /// What became of a retiring lane.
  enum class verdict : uint8_t {
    stays,      ///< an event is on its way to it: it wakes up for it
    gone,       ///< its route is cleared, its slot of the cap handed on
    gone_parked ///< as `gone`, and the key stays parked
  };

  class retire_round;

  /// Shard `i` publishes its `n` idle lanes (after each round). True if
  /// keys wait for the full cap and it should retire idle lanes now.
  [[nodiscard]] bool idle_lanes(size_t i, size_t n) noexcept;

  // -- move ------------------------------------------------------------------------

  /// Shard `from` hands its dry lane `lane` of `k` to shard `to`, giving
  /// back the counts of `done` finished events first. Under `k`'s lock: if
  /// no event of `k` is on its way to the lane (its count is zero) and the
  /// key is not parked, the lane gets a new id, `k`'s route names `to` and
  /// that id, and the item `transfer(new_id)` returns goes into `to`'s
  /// inbox through `k`'s stripe, ahead of any later event of `k`; returns
  /// the new id (`to` is woken). Else returns 0: the lane stays.
  template <class Transfer>
  uint64_t move(const key& k, uint64_t lane, uint32_t from, uint32_t to,
                size_t done, Transfer&& transfer) {
    uint64_t id = backlog_.find(k, [&](backlog::slot* xp) -> uint64_t {
      if (xp == nullptr)
        return 0;
      auto& x = *xp;
      backlog_.release_locked(k, x, done);
      if (x.lane_ != lane || x.shard_ != from || x.count_ != 0 || x.parked_)
        return 0;
      x.shard_ = to;
      x.lane_ = backlog_.name_lane(k);
      boxes_.to_shard(to, stripe_of(k), transfer(x.lane_));
      return x.lane_;
    });
    if (id != 0) {
      boxes_.lane_moved(from, to);
      boxes_.wake_shard(to);
    }
    return id;
  }

  // -- park ------------------------------------------------------------------------

  /// `k` is parked: its live lane parks what it is sent, and once it is
  /// gone (or if it has none: a key the park store holds at start) its
  /// events go to the supervisor.
  void park(const key& k);

  /// Whether `k` is parked, and whether its lane is still alive.
  struct park_state {
    bool parked;
    bool lane_alive;
  };
  [[nodiscard]] park_state parked(const key& k);

  /// Runs `discard()` under `k`'s lock (no event of `k` is admitted
  /// meanwhile); if it returns true, `k` is no longer parked.
  template <class F>
  void unpark(const key& k, F&& discard) {
    backlog_.locked(k, [&](backlog::slot& s) {
      if (discard())
        s.held_ = s.parked_ = false;
    });
  }

  /// Runs `revive(std::vector<event_ptr>&)` under `k`'s lock; if it
  /// returns true, the events it filled (numbered by the caller meanwhile,
  /// so later events of `k` come after them) run as `k`'s next events:
  /// `k` is no longer parked, and its lane starts now or it waits for a
  /// slot like any key.
  template <class F>
  void replay(const key& k, F&& revive) {
    std::vector<event_ptr> evs;
    route r;
    backlog_.locked(k, [&](backlog::slot& s) {
      if (revive(evs))
        r = revived(k, s, evs);
    });
    after(r);
  }

  // -- the cap ---------------------------------------------------------------------

  /// Sets the cap (a reload): waiting keys start at once if it rose; lanes
  /// above a lowered one retire when dry (shards are asked to look).
  void set_cap(size_t n);
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
  /// Keys waiting for a slot now.
  [[nodiscard]] size_t waiting() const noexcept {
    return waiting_.load(std::memory_order_seq_cst);
  }
  /// Most waiting keys one admission takes from the queue at once.
  static constexpr size_t admit_batch = 64;

  // -- inspection and stop -------------------------------------------------------

  /// Where the waiting event `seq` is, for the stall log: its key and how
  /// many keys wait ahead of it, or nothing if no key holds it.
  struct held_event {
    keylane::key k;
    clock::time_point submitted;
    size_t ahead;
  };
  [[nodiscard]] std::optional<held_event> find_held(uint64_t seq);

  /// Drops unused slots and an empty waiting queue's memory (idle).
  void purge_idle();
  /// The runtime stops: no waiting key is admitted from now on, and
  /// producers waiting for room wake (to see the `cancelled` flag).
  void close();
  /// Returns every event waiting keys hold (after `close`).
  std::vector<event_ptr> take_all_held();

private:
  // Where `place` sent an event; `after` wakes its taker.
  struct route {
    enum kind_t : uint8_t { none, lane, jumped, first_waiter, parked } kind
      = none;
    uint32_t shard = 0;
  };

  route place(const key& k, backlog::slot& s, event_ptr ev, bool past_cap);
  route revived(const key& k, backlog::slot& s, std::vector<event_ptr>& evs);
  void after(const route& r);
  // The one start-or-wait decision: starts `k`'s lane if the cap has room
  // and no key waits (or `past_cap`), else `k` begins to wait. True if the
  // lane started; `r` says whom to wake.
  bool start_or_wait(const key& k, backlog::slot& s, bool past_cap, route& r);
  void open_lane(const key& k, backlog::slot& s);
  void send_held(const key& k, backlog::slot& s);
  bool begin_wait(backlog::slot& s, const key& k);
  // Slots of the cap: as many as free up to `want`; one past the cap.
  [[nodiscard]] size_t take_caps(size_t want) noexcept;
  void overdraw_cap() noexcept;
  void release_cap(size_t n = 1) noexcept {
    active_.fetch_sub(n, std::memory_order_seq_cst);
  }
  [[nodiscard]] bool slot_wanted() const noexcept;
  // Starts the oldest waiting keys while the cap has room, `holding`
  // slots kept from retires first.
  void admit_waiting(size_t holding = 0);
  size_t pop_waiting(std::vector<key>& out, size_t max);
  void ask_for_idle_lanes();
  [[nodiscard]] bool claim_retire() noexcept;
  void end_retire_claims(size_t n) noexcept {
    retire_claims_.fetch_sub(n, std::memory_order_seq_cst);
  }
  [[nodiscard]] bool take_reclaim() noexcept;
  verdict close(const key& k, uint64_t lane, size_t done);

  backlog backlog_;
  inboxes& boxes_;
  alignas(64) std::atomic<size_t> cap_; // read-mostly
  std::atomic<bool> closed_{false};     // see close
  // Slots taken (`active_`, and the most at once) and keys waiting for one
  // (`waiting_`, the size of `wait_keys_`, changed under `wait_mtx_`): the
  // three move together, so they share a line.
  alignas(64) std::atomic<size_t> active_{0};
  std::atomic<size_t> peak_{0};
  alignas(64) std::atomic<size_t> waiting_{0};
  spin_mutex wait_mtx_;
  std::deque<key> wait_keys_;
  // Shards only (retires), off the lines producers write.
  alignas(64) std::atomic<size_t> retire_claims_{0};
  std::atomic<size_t> reclaim_{0}; // lanes above a lowered cap
};

/// A shard's retires of one round, each a verdict of the table: lanes past
/// their linger or parking (`retire` with nothing claimed), and while keys
/// wait for the full cap (or lanes exceed a lowered cap) idle lanes the
/// shard may retire at once (`wanted`). A claimed retire keeps its slot of
/// the cap for the oldest waiting key; kept slots are handed on in batches
/// (one pass over the waiting queue for many keys) and their claims end
/// only then, so other shards stand back for those keys meanwhile. Ends
/// (and hands on what it kept) when destroyed. One shard's thread.
class key_table::retire_round {
public:
  retire_round(key_table& t, uint32_t shard) noexcept : t_(t), shard_(shard) {}
  ~retire_round() { finish(); }
  retire_round(const retire_round&) = delete;
  retire_round& operator=(const retire_round&) = delete;

  /// May an idle lane retire now, before its linger? It claims a retire
  /// for a waiting key, or one of the lanes above a lowered cap; the next
  /// `retire` uses the claim.
  [[nodiscard]] bool wanted() noexcept;

  /// The verdict for `k`'s dry lane `lane`, which gives back `done` ended
  /// events first. Unless it stays, `erase()` runs before its slot of the
  /// cap is freed or handed on: never more lanes than the cap.
  template <class Erase>
  verdict retire(const key& k, uint64_t lane, size_t done, Erase&& erase) {
    auto v = t_.close(k, lane, done);
    if (v != verdict::stays)
      erase();
    settle(v != verdict::stays);
    return v;
  }

  /// Hands on the slots kept so far; frees the others' to waiting keys.
  void finish();

private:
  void settle(bool gone);
  void hand_on();
  key_table& t_;
  uint32_t shard_;
  bool claimed_ = false; // by the last `wanted`, for the next `retire`
  bool freed_ = false;   // an unclaimed retire freed a slot
  size_t kept_ = 0;      // slots kept for waiting keys
};

} // namespace keylane::detail
