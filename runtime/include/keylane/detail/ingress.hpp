#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <vector>

#include <caf/actor.hpp>

#include "keylane/config.hpp"
#include "keylane/detail/backlog.hpp"
#include "keylane/detail/event_base.hpp"
#include "keylane/detail/mpmc_queue.hpp"
#include "keylane/detail/waiter.hpp"
#include "keylane/errc.hpp"

namespace keylane::detail {

/// Where accepted events enter: the admission window, the per-key backlog,
/// sequence numbers, the supervisor's queue, and one inbox per shard for
/// events of keys whose lane is live (sent there without a supervisor
/// round).
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

  ingress(size_t key_backlog, size_t window, size_t shards, waiter& w);

  /// Takes a window credit and a backlog slot for `k` — waiting for them
  /// if `may_wait`, else refusing — then builds the event with `make` and
  /// enqueues it under `k`'s stripe lock: to the shard of `k`'s live lane,
  /// or to the supervisor. `make` runs only if the event is accepted; if it
  /// throws, nothing was taken and the exception propagates.
  admission submit(const key& k, make_fn make, void* ctx, bool may_wait);

  /// Refuses new events from now on and returns once every `submit` in
  /// progress has enqueued or given up.
  void close();

  /// The supervisor, which `submit` wakes for events of keys with no lane.
  void attach_supervisor(caf::actor a) { supervisor_ = std::move(a); }

  /// Makes `a` the shard actor that events routed to shard `i` wake.
  void attach_shard(size_t i, caf::actor a) {
    inboxes_[i]->actor = std::move(a);
  }

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

  /// Takes up to `max` events sent straight to lanes of shard `i`.
  size_t dequeue_inbox(size_t i, event_base** buf, size_t max) {
    return inboxes_[i]->events.try_dequeue_bulk(buf, max);
  }

  /// Shard `i` holds `n` events it has not finished (published once per
  /// round; the supervisor places new lanes by it).
  void note_shard_load(size_t i, uint64_t n) noexcept {
    inboxes_[i]->load.store(n, std::memory_order_relaxed);
  }

  /// How many shards (and inboxes) there are.
  [[nodiscard]] size_t shard_count() const noexcept { return inboxes_.size(); }

  /// What shard `i` last published with `note_shard_load`.
  [[nodiscard]] uint64_t shard_load(size_t i) const noexcept {
    return inboxes_[i]->load.load(std::memory_order_relaxed);
  }

  // -- backlog -----------------------------------------------------------------

  /// Returns `n` backlog slots of `k` (events of `k` completed).
  void release_backlog(const key& k, size_t n) { backlog_.release(k, n); }

  /// `release_backlog` for a live lane, which may take `k`'s new events
  /// straight from `submit` from now on (see `backlog::release_routed`).
  bool release_routed(const key& k, size_t n, backlog::route to,
                      bool may_route, uint64_t ingress_seen) {
    return backlog_.release_routed(k, n, to, may_route, ingress_seen);
  }

  /// Stops sending `k`'s events straight to `lane` (see `backlog::unroute`).
  [[nodiscard]] bool unroute(const key& k, const void* lane,
                             uint64_t direct_seen) {
    return backlog_.unroute(k, lane, direct_seen);
  }

  /// Runs `fn(force)` with no event of `k` entering meanwhile (see
  /// `backlog::locked`).
  template <class F>
  decltype(auto) with_key_locked(const key& k, F&& fn) {
    return backlog_.locked(k, std::forward<F>(fn));
  }

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

  /// Events accepted that no shard has taken yet (approximate).
  [[nodiscard]] uint64_t depth() const noexcept;

private:
  bool take_credit();
  void wake_supervisor();
  void wake_shard(size_t i);

  // Producers bump these on every submit: each on its own cache line.
  alignas(64) std::atomic<uint64_t> next_seq_{0};
  alignas(64) std::atomic<uint64_t> in_flight_{0};
  alignas(64) std::atomic<size_t> window_;
  alignas(64) std::atomic<bool> signalled_{false};
  alignas(64) std::atomic<bool> closed_{false};
  // Submits in progress: `close` waits for them to enqueue or give up.
  alignas(64) std::atomic<int> inside_submit_{0};
  std::atomic<uint64_t> rejected_{0};
  waiter& waiter_;

  backlog backlog_;
  mpmc_queue<event_base*> queue_;
  // One token per backlog stripe, used under that stripe's lock.
  std::array<std::unique_ptr<producer_token>, backlog::shard_count> tokens_;
  // Per shard: the events `submit` sends straight to its lanes, with one
  // token per backlog stripe (FIFO per key, as above) and the flag that
  // saves a wake-up message while one is pending.
  struct shard_inbox {
    mpmc_queue<event_base*> events;
    std::array<std::unique_ptr<producer_token>, backlog::shard_count> tokens;
    alignas(64) std::atomic<bool> signalled{false};
    alignas(64) std::atomic<uint64_t> load{0}; // written once per round
    caf::actor actor;
  };
  std::vector<std::unique_ptr<shard_inbox>> inboxes_;
  caf::actor supervisor_;
};

} // namespace keylane::detail
