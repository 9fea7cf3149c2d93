#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include <caf/actor.hpp>
#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>
#include <caf/expected.hpp>

#include "keylane/config.hpp"
#include "keylane/detail/backlog.hpp"
#include "keylane/detail/event_base.hpp"
#include "keylane/detail/latency_recorder.hpp"
#include "keylane/detail/logger.hpp"
#include "keylane/detail/mpmc_queue.hpp"
#include "keylane/detail/spill_file.hpp"
#include "keylane/errc.hpp"
#include "keylane/handler_registry.hpp"
#include "keylane/park_store.hpp"
#include "keylane/reload.hpp"
#include "keylane/stats.hpp"

namespace keylane::detail {

class metrics_endpoint;

/// What the engine needs of a payload type to park and replay its events;
/// `runtime<P, R>` fills it from `codec<P>` and `P`'s copy constructor.
struct payload_ops {
  /// `park` writes bytes (a durable store can keep them).
  bool bytes = false;
  /// `park` keeps a copy of the payload (enough for a memory store).
  bool copies = false;
  /// Fills `rec.payload` (bytes) or `rec.object` (a copy) from `ev`.
  std::function<caf::error(const event_base& ev, parked_record& rec,
                           bool want_bytes)>
    park;
  /// A fresh, unsubmitted event for the payload of `rec`.
  std::function<caf::expected<event_ptr>(const parked_record& rec)> revive;
  /// `spill` and `unspill` exist (the payload and result have codecs).
  bool spills = false;
  /// Encodes the payload and, if set, the result of `ev` (sink spill).
  std::function<caf::error(const event_base& ev, std::string& payload,
                           std::optional<std::string>& result)>
    spill;
  /// A fresh event of `k` with the payload and result decoded.
  std::function<caf::expected<event_ptr>(
    const key& k, std::string_view payload,
    const std::optional<std::string>& result)>
    unspill;
};

/// The untyped core of a runtime: the actor system, ingress, window
/// credit, per-key backlog, output queue and counters. `runtime<P, R>` is a
/// typed face over it.
///
/// Thread-safety: `submit`, `snapshot`, `try_pull`, `pull` and `drain` may
/// be called from any thread at once; `stop` from one thread. The
/// actor-side functions are called by keylane's own actors. A key's events
/// enter ingress in sequence-number order (assigned under the key's shard
/// lock); different keys' events interleave in no defined order.
class engine {
public:
  /// Called on the consumer thread for each delivered event; empty for
  /// pull mode.
  using output_fn = std::function<void(event_base&)>;

  /// Builds the actor system and actors. Fails with `errc::startup_failed`.
  static caf::expected<std::unique_ptr<engine>>
  start(settings cfg, handler_factory make, output_fn out, payload_ops ops);

  ~engine();
  engine(const engine&) = delete;
  engine& operator=(const engine&) = delete;

  // -- producers --------------------------------------------------------------

  /// Builds an event for `submit`; `ctx` is the caller's state.
  using make_fn = event_ptr (*)(void* ctx);

  /// What `submit` did: `code == errc::none` and a sequence number, or an
  /// error and nothing taken.
  struct admission {
    errc code;
    uint64_t seq;
  };

  /// Takes a window credit and a backlog slot for `k` (waiting or not, as
  /// the overflow policy says), then builds the event with `make` and hands
  /// it to the supervisor under `k`'s shard lock, so one key's events enter
  /// ingress in sequence-number order. On the runtime's own threads (see
  /// `on_own_thread`) `block` acts as `reject`: the credit it would wait
  /// for can only come back through the thread that would be waiting. `make` runs only if the event is
  /// accepted; if it throws, nothing was taken and the exception propagates.
  admission submit(const key& k, make_fn make, void* ctx);

  /// True on a thread of this runtime: the consumer thread that runs the
  /// output callback, or a worker of its actor system (handlers, and the
  /// user's actors spawned there). `submit` never waits there.
  [[nodiscard]] bool on_own_thread() const noexcept;

  // -- consumers --------------------------------------------------------------

  /// Takes one delivered event without waiting (pull mode).
  [[nodiscard]] bool try_pull(event_ptr& out);

  /// Takes one delivered event, waiting up to `timeout` (pull mode).
  [[nodiscard]] bool pull(event_ptr& out, std::chrono::nanoseconds timeout);

  /// Waits until every accepted event was delivered; false on timeout.
  [[nodiscard]] bool drain(std::chrono::nanoseconds timeout);

  /// Rejects new events, ends the actors, reports what was not delivered.
  stop_report stop();

  // -- operators --------------------------------------------------------------

  /// Every parked key with its summary.
  [[nodiscard]] caf::expected<std::vector<parked_key>> parked_keys();

  /// The parked records of `k`, in order.
  [[nodiscard]] caf::expected<std::vector<parked_record>>
  parked_records(const key& k);

  /// Resubmits the parked events of `k`, in order, ahead of any newer event
  /// of `k`; returns how many. They get new sequence numbers.
  [[nodiscard]] caf::expected<uint64_t> replay(const key& k);

  /// Drops the parked events of `k` and un-parks it; returns how many.
  [[nodiscard]] caf::expected<uint64_t> discard(const key& k);

  /// The payload operations (for the typed front).
  [[nodiscard]] const payload_ops& ops() const noexcept { return ops_; }

  /// A snapshot of the counters.
  [[nodiscard]] keylane::stats snapshot() const;

  /// The settings the runtime started with (what keys that need a restart
  /// keep using).
  [[nodiscard]] const settings& config() const noexcept { return cfg_; }

  /// The settings in force: the start settings with every reload applied.
  [[nodiscard]] settings_ptr live() const;

  /// Bumped by every reload that changed a run-time key; actors compare it
  /// (one relaxed load) to learn that `live()` changed.
  [[nodiscard]] uint64_t live_generation() const noexcept {
    return live_gen_.load(std::memory_order_acquire);
  }

  /// Applies the run-time keys of `next` (see `reloads_at_run_time`); keys
  /// that need a restart keep their running value and are reported. On
  /// error nothing changes. Serialised: one reload at a time.
  [[nodiscard]] caf::expected<reload_report> reload(settings next);

  /// Sets the admission window (`window = "auto"`: the sink sizes it);
  /// blocked producers go on at once if it grew.
  void resize_window(size_t n);

  /// The sink's spill file (`sink.spill_path`), or null.
  [[nodiscard]] spill_file* spill() noexcept { return spill_.get(); }

  /// Stops admitting new events (the spill file is full) or admits again.
  void hold_admission(bool hold);

  /// Whether the sink records the latency histogram (`metrics.latency`).
  /// How many shard actors host the lanes (`scheduler.shards` resolved).
  [[nodiscard]] size_t shard_count() const noexcept { return shard_count_; }

  [[nodiscard]] bool record_latency() const noexcept {
    return record_latency_.load(std::memory_order_relaxed);
  }

  /// The actor system, for user actors the handlers talk to.
  [[nodiscard]] caf::actor_system& system() noexcept { return *system_; }

  // -- for keylane's actors ---------------------------------------------------

  /// Clears the "supervisor was signalled" flag before draining ingress.
  void rearm_ingress() noexcept;

  /// Takes up to `max` events from ingress.
  size_t dequeue_ingress(event_base** buf, size_t max);

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

  /// Makes `a` the shard actor that events routed to shard `i` wake.
  void attach_shard(size_t i, caf::actor a);

  /// Clears shard `i`'s "signalled" flag before it takes its inbox.
  void rearm_inbox(size_t i) noexcept;

  /// Takes up to `max` events sent straight to lanes of shard `i`.
  size_t dequeue_inbox(size_t i, event_base** buf, size_t max);

  /// Shard `i` holds `n` events it has not finished (published once per
  /// round; the supervisor places new lanes by it).
  void note_shard_load(size_t i, uint64_t n) noexcept {
    inboxes_[i]->load.store(n, std::memory_order_relaxed);
  }

  /// What shard `i` last published with `note_shard_load`.
  [[nodiscard]] uint64_t shard_load(size_t i) const noexcept {
    return inboxes_[i]->load.load(std::memory_order_relaxed);
  }

  /// Hands events to the application, in the order given.
  void emit(event_base** evs, size_t n);

  /// Moves `evs` (each key's in submission order) to the park store in one
  /// transaction and marks them `parked`; each one's `error` holds its
  /// reason. Events revived by a replay are in the store already: only
  /// their records' failure details are updated. If the store refuses, they end `failed` with the
  /// store's error instead: accounted for, never lost silently.
  void park(event_ptr* evs, size_t n);

  /// Records that replayed events of `k` up to store id `id` ended, so they
  /// leave the store.
  void unpark_through(const key& k, uint64_t id);

  /// Runs `fn(force)` with no event of `k` entering ingress meanwhile
  /// (see `backlog::locked`).
  template <class F>
  decltype(auto) with_key_locked(const key& k, F&& fn) {
    return backlog_.locked(k, std::forward<F>(fn));
  }

  /// Takes up to `max` events from the ingress lane that carries `k`'s
  /// events (call under `with_key_locked(k)` to empty it of `k`).
  size_t dequeue_ingress_of(const key& k, event_base** buf, size_t max);

  /// Gives replayed events new sequence numbers and window credit (under
  /// `with_key_locked`, so newer events of their key get higher ones).
  void accept_replayed(std::vector<event_ptr>& evs);

  /// The park store, or null for `park = none`.
  [[nodiscard]] park_store* store() noexcept { return store_.get(); }

  /// Records events that `stop` ended before delivery.
  void abandon(event_ptr ev, const char* stage);

  /// Records an event that `stop` ended before delivery, by number and key
  /// (for events held only as spill records).
  void abandon(uint64_t seq, const key& k, const char* stage);

  /// Gives back the window credit of `n` events that can never be
  /// delivered (a spill record that cannot be read back), so output goes
  /// on and `drain` returns (false); they do not count as delivered, and
  /// `stop` reports them as "lost in spill".
  void forget(size_t n);

  /// Registers an actor of the runtime; `stop` waits for all to leave.
  void actor_started() noexcept;
  /// Unregisters an actor of the runtime.
  void actor_stopped() noexcept;

  /// True once `stop` began.
  [[nodiscard]] bool stopping() const noexcept {
    return stopped_.load(std::memory_order_acquire);
  }

  /// Counters the actors publish (single writer each, relaxed).
  struct published {
    std::atomic<uint64_t> active_lanes{0};
    std::atomic<uint64_t> peak_active_lanes{0};
    std::atomic<uint64_t> waiting_keys{0};
    std::atomic<uint64_t> lanes_spawned{0};
    std::atomic<uint64_t> lanes_retired{0};
    std::atomic<uint64_t> sink_buffered{0};
    std::atomic<uint64_t> peak_sink_buffered{0};
    std::atomic<uint64_t> awaited_seq{0};
    std::atomic<int64_t> awaited_since_ns{0};
    std::atomic<uint64_t> ok{0};
    std::atomic<uint64_t> skipped{0};
    std::atomic<uint64_t> failed{0};
    std::atomic<uint64_t> parked{0};
    std::atomic<uint64_t> retries{0};
    std::atomic<uint64_t> replayed{0};
    std::atomic<uint64_t> spilled{0};
    std::atomic<uint64_t> spill_held{0};
    std::atomic<uint64_t> spill_bytes{0};
    std::atomic<uint64_t> peak_spill_held{0};
    latency_recorder latency;
  };

  /// Counters written by the actors.
  published& counters() noexcept { return pub_; }

  /// The runtime's log.
  logger& log() noexcept { return log_; }

private:
  engine(settings cfg, output_fn out, payload_ops ops);
  static caf::error check_numbers(const settings& cfg);
  static size_t initial_window(const settings& cfg) noexcept;
  caf::error open_store();
  caf::error open_spill();
  caf::expected<uint64_t> ask_supervisor(bool replay, const key& k);
  void keep_unfinished();
  void wake_supervisor();
  void wake_shard(size_t i);
  void credit(size_t n);
  void consume_loop();
  bool wait_until(std::chrono::steady_clock::time_point deadline,
                  const std::function<bool()>& done);
  stop_report report_;

  settings cfg_;
  output_fn out_;
  payload_ops ops_;
  std::unique_ptr<park_store> store_;
  std::unique_ptr<spill_file> spill_;

  // Producers bump these on every submit: each on its own cache line.
  alignas(64) std::atomic<uint64_t> next_seq_{0};
  alignas(64) std::atomic<uint64_t> in_flight_{0};
  alignas(64) std::atomic<uint64_t> delivered_{0};
  // Accepted events that can never be delivered (see `forget`).
  std::atomic<uint64_t> lost_{0};
  alignas(64) std::atomic<bool> signalled_{false};
  alignas(64) std::atomic<bool> stopped_{false};
  // Submits in progress: `stop` waits for them to enqueue or give up.
  alignas(64) std::atomic<int> inside_submit_{0};
  std::atomic<uint64_t> rejected_{0};
  std::atomic<int> live_actors_{0};

  backlog backlog_;
  mpmc_queue<event_base*> ingress_;
  // One ingress token per backlog shard, used under that shard's lock:
  // moodycamel is FIFO per token, so each key's events stay in order.
  std::array<std::unique_ptr<producer_token>, backlog::shard_count> ingress_tokens_;
  // Per shard: the events `submit` sends straight to its lanes, with one
  // token per backlog shard (FIFO per key, as for ingress) and the flag that
  // saves a wake-up message while one is pending.
  struct shard_inbox {
    mpmc_queue<event_base*> events;
    std::array<std::unique_ptr<producer_token>, backlog::shard_count> tokens;
    alignas(64) std::atomic<bool> signalled{false};
    alignas(64) std::atomic<uint64_t> load{0}; // written once per round
    caf::actor actor;
  };
  std::vector<std::unique_ptr<shard_inbox>> inboxes_;
  short_spin_queue<event_base*> output_;
  // The sink enqueues through one token: moodycamel keeps FIFO order per
  // token, while the sink actor may run on a different thread each time.
  std::unique_ptr<producer_token> output_token_;

  // Waiters for window credit, drain and actor shutdown.
  std::mutex wait_mtx_;
  std::condition_variable wait_cv_;
  std::atomic<int> waiters_{0};
  std::mutex abandoned_mtx_;
  std::vector<unfinished_event> abandoned_;
  std::vector<event_ptr> to_keep_; // unfinished, for the durable store

  published pub_;
  logger log_;

  // Reloadable settings: `live_` under `live_mtx_`, a generation for cheap
  // change checks, and the values producers and the sink read per event.
  mutable std::mutex live_mtx_;
  settings_ptr live_;
  std::atomic<uint64_t> live_gen_{0};
  std::mutex reload_mtx_;
  alignas(64) std::atomic<size_t> window_;
  std::atomic<bool> record_latency_;
  size_t shard_count_ = 1;
  std::thread consumer_;
  std::atomic<bool> consumer_stop_{false};

  std::unique_ptr<caf::actor_system_config> system_cfg_;
  std::unique_ptr<caf::actor_system> system_;
  caf::actor supervisor_;
  caf::actor sink_;
  // The `metrics.listen` endpoint, or null; scrapes call `snapshot` and
  // `parked_keys` on its threads. `stop` closes it first.
  std::unique_ptr<metrics_endpoint> metrics_;
};

} // namespace keylane::detail
