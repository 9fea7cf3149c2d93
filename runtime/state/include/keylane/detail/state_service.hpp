// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include <caf/error.hpp>
#include <caf/expected.hpp>

#include "keylane/config.hpp"
#include "keylane/key.hpp"
#include "keylane/latency.hpp"
#include "keylane/detail/state_round.hpp"
#include "keylane/state_store.hpp"

namespace keylane::detail {

class logger;

/// Counters of the state service, for `stats`.
struct state_counters {
  uint64_t loads = 0, load_failures = 0, writes = 0, write_bytes = 0,
           checkpoints = 0, write_failures = 0, pending = 0;
  std::chrono::nanoseconds checkpoint_age{0};
  latency_histogram load_latency;
};

/// Keeps keyed state in the configured store, behind the lanes. Shards
/// `stage` rounds; one writer thread writes whatever has been staged since
/// its last write as one atomic, synced batch (later records of a key
/// replace earlier ones), at most once per `state.checkpoint_ms` unless a
/// `write_now` or `flush` waits (a key that retires and comes back several
/// times in between is written once), then reports the events it made
/// durable to the listener, in staging order. Until written, a staged
/// record is what `load` returns for its key, so a key that retires and
/// activates again before the write never sees older state; written ones
/// stay cached up to `state.cache_bytes`, oldest written first out, so a
/// key that comes back is loaded without reading the store. A failed write
/// is retried (after a pause, with one log line per failure streak) and
/// blocks nothing but later writes: loads keep seeing the staged records.
///
/// Thread-safety: every member may be called from any thread; `close`
/// once, after the actors are gone.
class state_service {
public:
  using durable_fn = std::function<void(const std::vector<uint64_t>& seqs)>;
  /// Hears of a written round's kept messages: those to send, and those
  /// whose targets' records now hold them.
  using messages_fn = std::function<void(
    std::vector<event_ptr>& sends,
    const std::vector<std::pair<key, uint64_t>>& delivered)>;

  /// Opens the store `cfg` names (none: a service that keeps nothing).
  [[nodiscard]] static caf::expected<std::unique_ptr<state_service>>
  open(const settings& cfg, logger& log);

  ~state_service();
  state_service(const state_service&) = delete;
  state_service& operator=(const state_service&) = delete;

  /// Whether state is kept anywhere (`state.store` is not "none").
  [[nodiscard]] bool enabled() const noexcept { return store_ != nullptr; }

  /// The record bytes of `k`: a staged one, else the store's; nullopt for a
  /// key without state.
  [[nodiscard]] caf::expected<std::optional<std::string>> load(const key& k);

  /// Hands `r` to the writer thread.
  void stage(state_round r);

  /// Stages `r` and waits until it is written (`sync = "every_event"`),
  /// however long the store fails, unless `interrupt` was called: then it
  /// fails, and `r` is taken back (never written), since its events are
  /// not delivered.
  [[nodiscard]] caf::error write_now(state_round r);

  /// Lets `write_now` calls give up while the store fails (`stop`).
  void interrupt();

  /// Sets who hears of durable events (before events flow).
  void on_durable(durable_fn fn);

  /// Sets who hears of written kept messages (before events flow).
  void on_messages(messages_fn fn);

  /// Waits until everything staged so far is written or `timeout` passed;
  /// false on timeout (a store that keeps failing).
  bool flush(std::chrono::nanoseconds timeout);

  /// Flushes (up to `timeout`) and ends the writer thread.
  void close(std::chrono::nanoseconds timeout);

  [[nodiscard]] state_counters counters() const;

  /// The store, or null (none).
  [[nodiscard]] state_store* store() noexcept { return store_.get(); }

private:
  struct cached {
    std::string bytes;
    uint64_t gen;
    bool written;
  };
  state_service(std::unique_ptr<state_store> store, const settings& cfg,
                logger& log);
  void put(const key& k, std::string bytes, bool written);
  void evict();
  void run();
  bool write_batch(std::vector<state_round>& rounds,
                   const std::vector<std::pair<key, uint64_t>>& gens);
  void count_load(std::chrono::nanoseconds d) noexcept;
  void report(const std::vector<uint64_t>& seqs);

  std::unique_ptr<state_store> store_;
  logger& log_;

  mutable std::mutex mtx_;
  std::condition_variable cv_;
  std::deque<state_round> queue_;
  // Staged (unwritten) records, and written ones while they fit.
  std::unordered_map<key, cached, key_hasher> cache_;
  std::deque<std::pair<key, uint64_t>> written_order_; // eviction order
  size_t cache_limit_;
  size_t cached_bytes_ = 0;
  size_t unwritten_ = 0;
  size_t queued_writes_ = 0; // records in `queue_`
  uint64_t gen_ = 0;
  std::chrono::nanoseconds pace_;
  std::chrono::steady_clock::time_point next_write_;
  bool urgent_ = false; // someone waits for the next write
  uint64_t enqueued_ = 0, written_ = 0; // rounds
  bool busy_ = false;
  bool stopping_ = false;
  bool interrupted_ = false;
  bool failing_ = false; // the last write failed
  std::chrono::steady_clock::time_point last_write_;
  // The writer thread's own: failed tries since the last write that
  // worked, and when the first of them failed.
  uint64_t streak_tries_ = 0;
  std::chrono::steady_clock::time_point streak_start_;
  durable_fn durable_;
  messages_fn messages_;
  std::mutex durable_mtx_; // serialises reports (writer and write_now)

  std::atomic<uint64_t> loads_{0}, load_failures_{0}, writes_{0},
    write_bytes_{0}, checkpoints_{0}, write_failures_{0};
  std::array<std::atomic<uint64_t>, latency_histogram::bounds_us.size() + 1>
    load_counts_{};
  std::atomic<uint64_t> load_ns_{0};
  std::thread writer_;
};

} // namespace keylane::detail
