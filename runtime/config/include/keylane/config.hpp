// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <variant>
#include <vector>

#include <caf/expected.hpp>

namespace keylane {

class state_store;

/// Marks a bound as absent ("unbounded" in the config file).
inline constexpr size_t unbounded = std::numeric_limits<size_t>::max();

/// How the sink orders what it emits.
enum class order_mode {
  /// Global submission (sequence-number) order.
  global,
  /// Per-key submission order; keys interleave freely.
  per_key,
  /// Completion order.
  none,
};

/// What `submit` does when the window or a key's backlog is full.
enum class overflow_policy {
  /// Return `errc::window_full` or `errc::key_backlog_full` at once.
  reject,
  /// Wait until there is room (or the runtime stops).
  block,
};

/// CAF's scheduler policy.
enum class scheduler_policy {
  /// Work sharing: one shared job queue.
  sharing,
  /// Work stealing: one queue per worker, idle workers steal.
  stealing,
};

/// How retry delays are drawn.
enum class jitter_mode {
  /// Exactly the capped exponential delay.
  none,
  /// Uniform in [0, capped exponential delay] ("full jitter").
  full,
};

/// Where a key's events go when one of them fails for good.
enum class park_mode {
  /// Parked in memory: kept in order until replayed or discarded, lost with
  /// the process.
  memory,
  /// Parked in an SQLite file (`park.path`): survives a restart.
  sqlite,
  /// Not parked: the event ends as a failed tombstone and the key's later
  /// events go ahead. An explicit opt-out of per-key order across failures.
  none,
};

/// Where a stateful handler's per-key state is kept (`[state] store`).
enum class state_backend {
  /// Nowhere: each activation starts from a default state, which retires
  /// with the lane.
  none,
  /// In memory: survives a key's retire and `stop()`, not the process.
  memory,
  /// A RocksDB database in the directory `state.path`: survives a crash
  /// and a restart, as of its last checkpoint.
  rocksdb,
};

/// When the event path waits for state to be written.
enum class state_sync {
  /// Never: state is written behind the lanes, at checkpoints, on retire
  /// and on `stop()`, in batches.
  checkpoint,
  /// After every event: its output waits until the key's state after it
  /// is durable (one synchronous write per event; for tests and for users
  /// who want it).
  every_event,
};

/// What opening a RocksDB state store does with a write-ahead log damaged
/// before its end (`[state] recover`). A log cut off inside its last
/// record, as a crash mid-write leaves it, is not damage: both open it.
enum class state_recovery {
  /// Refuses to open, naming the file, and changes nothing: reading the log
  /// only up to the damage would hand keys older states without a word.
  strict,
  /// RocksDB's point-in-time recovery: keeps the log up to the damage and
  /// drops the rest of it, and every later log, for good; a warning says
  /// which file and what was dropped. For one start after a refusal.
  point_in_time,
};

/// Which thread runs the output callback.
enum class output_thread {
  /// A consumer thread of keylane's own: a slow callback never holds up a
  /// worker, at the price of one more thread and a hand-off per batch.
  consumer,
  /// The sink actor, on a worker thread, as it releases results: no extra
  /// thread and no hand-off, but the callback's time is a worker's time,
  /// and a callback that blocks stalls the sink (and so all output).
  sink,
  /// The worker that releases results runs the callback while the
  /// consumer thread sleeps (light load: no wake-up), for a bounded time
  /// (`inline_output_budget`), and leaves the rest to the consumer thread
  /// (load: no worker time). A slow callback holds a worker for one call,
  /// and the other keys of that worker's shard wait for it meanwhile: a
  /// callback that may block wants `consumer`.
  automatic,
};

/// Severity threshold of the runtime's log.
enum class log_level { error, warning, info, debug };

/// Where a config value came from, for error messages ("file:line").
struct source_location {
  std::string file;
  size_t line = 0;
};

/// One value of a handler's own config table.
using param_value = std::variant<bool, int64_t, double, std::string>;

/// The handler's own table (`[handler.<name>]`). Reading a key marks it as
/// used; after the handler is built, `unused()` lists the keys it did not
/// read, which the runtime reports as unknown keys. Not thread-safe: read it
/// in the handler's constructor only.
class handler_params {
public:
  /// Adds a value, as parsed from `where`.
  void set(std::string name, param_value value, source_location where = {});

  /// True if the table holds `name`.
  [[nodiscard]] bool contains(const std::string& name) const;

  /// Reads an integer, or `fallback` when absent. Records a type error.
  int64_t get_int(const std::string& name, int64_t fallback) const;

  /// Reads a number (integers convert), or `fallback`. Records a type error.
  double get_double(const std::string& name, double fallback) const;

  /// Reads a bool, or `fallback` when absent. Records a type error.
  bool get_bool(const std::string& name, bool fallback) const;

  /// Reads a string, or `fallback` when absent. Records a type error.
  std::string get_string(const std::string& name, std::string fallback) const;

  /// Records that `name` is invalid because of `why` (for range checks).
  void reject(const std::string& name, std::string why) const;

  /// Problems found so far, each "file:line: handler.<name>.key ...: why".
  [[nodiscard]] std::vector<std::string> problems(const std::string& handler)
    const;

  /// All entries, for printing the effective config.
  [[nodiscard]] const std::map<std::string, param_value>& values() const {
    return values_;
  }

private:
  struct problem {
    std::string key;
    std::string why;
  };
  std::map<std::string, param_value> values_;
  std::map<std::string, source_location> where_;
  mutable std::set<std::string> used_;
  mutable std::vector<problem> problems_;
};

/// Every knob of a runtime, with its default. The config file fills it
/// (see config_loader.hpp); code reads only this struct.
struct settings {
  // -- [runtime] ------------------------------------------------------------

  /// Most lanes (active keys) alive at once; further keys wait in order.
  size_t max_active_keys = 1024;

  /// Most events accepted but not yet delivered; `unbounded` for no limit.
  /// With `window_auto`, the size the runtime starts with.
  size_t window = 65536;

  /// `window = "auto"`: the runtime sizes the window itself from the
  /// measured completion rate times the recent tail latency, never above
  /// `window_max`.
  bool window_auto = false;

  /// The largest window `window = "auto"` may choose.
  size_t window_max = 65536;

  /// Output order. `per_key` by default: each key's results in its
  /// submission order, no key held back by another (docs/config.md says
  /// why; `global` until 0.2.0).
  order_mode order = order_mode::per_key;

  /// Most events of one key accepted but not yet completed. A sixteenth of
  /// the default window, so one hot key cannot take all of it (it was the
  /// whole window, 65536, until 0.2.0).
  size_t key_backlog = 4096;

  /// What a full window or key backlog does to `submit`.
  overflow_policy overflow = overflow_policy::block;

  /// Most events a lane runs in one go before letting other actors run.
  size_t lane_batch = 64;

  /// Most events of parked keys the supervisor takes from ingress per
  /// message.
  size_t ingress_batch = 1024;

  /// How long a lane whose queue ran dry stays bound to its key, in
  /// milliseconds, while no other key waits for its slot: a key that gets
  /// its next event meanwhile skips a retire and a start. 0 retires at once.
  size_t lane_linger_ms = 100;

  // -- [sink] ---------------------------------------------------------------

  /// A directory for the sink's spill file (global order): results beyond
  /// the in-memory window go to disk instead of stalling admission. Empty:
  /// no spill, the window bounds admission.
  std::string spill_path;

  /// Most bytes the spill file may hold; when full, admission waits (or
  /// rejects) as with a full window until the file drains.
  size_t spill_max_bytes = size_t{1} << 30;

  /// Which thread runs the output callback (pull mode has none).
  keylane::output_thread output_thread = keylane::output_thread::automatic;

  // -- [scheduler] ----------------------------------------------------------

  /// CAF scheduler policy.
  scheduler_policy scheduler = scheduler_policy::sharing;

  /// Worker threads; 0 means one per CPU this process may use
  /// (`keylane::usable_cpus()`: its affinity mask and cgroup CPU quota).
  size_t threads = 0;

  /// Messages an actor handles before yielding its thread.
  size_t max_throughput = 300;

  /// Shard actors hosting the lanes; 0 means one per worker thread. A key's
  /// lane runs in one shard, and a handler that blocks its thread stalls
  /// the other keys of that shard.
  size_t shards = 0;

  /// A shard that holds far more unfinished events than another hands it
  /// the lanes that run dry with nothing pending (handler instance and
  /// state go with them; `self()` is the new shard from then on), so a hot
  /// key's shard does not keep its share of the other keys while the other
  /// cores idle. false: a lane stays in the shard it started in until it
  /// retires (for handlers that keep `self()` or timers of their own
  /// across events).
  bool move_idle_lanes = true;

  // -- [retry] --------------------------------------------------------------

  /// Handler attempts per event, the first included (1: no retry). 3 by
  /// default, so a brief fault (a database blip) does not park a key at
  /// its first failure (it was 1 until 0.2.0).
  size_t max_attempts = 3;

  /// Delay before the second attempt, in milliseconds.
  size_t initial_backoff_ms = 10;

  /// Each further delay is the previous one times this (>= 1).
  double backoff_multiplier = 2.0;

  /// No delay exceeds this, in milliseconds.
  size_t max_backoff_ms = 1000;

  /// How delays are drawn.
  jitter_mode jitter = jitter_mode::none;

  /// An attempt not completed within this many milliseconds fails (and its
  /// late completion is ignored); 0 for no limit.
  size_t attempt_timeout_ms = 0;

  // -- [park] ---------------------------------------------------------------

  /// Where events go when retries run out or a failure is permanent.
  park_mode park = park_mode::memory;

  /// The SQLite file of `park = sqlite` (created if missing).
  std::string park_path;

  // -- [state] --------------------------------------------------------------

  /// Where a stateful handler's per-key state is kept.
  state_backend state_store = state_backend::none;

  /// The directory of `state.store = "rocksdb"` (created if missing).
  std::string state_path;

  /// What the RocksDB store's open does with a damaged write-ahead log.
  state_recovery state_recover = state_recovery::strict;

  /// Every this many milliseconds, each key whose state changed since its
  /// last write is written (one batch for all of them).
  size_t state_checkpoint_ms = 100;

  /// Also writes a key's state after every this many of its events; 0: only
  /// on the timer.
  size_t state_checkpoint_events = 0;

  /// When the event path waits for the disk.
  state_sync state_sync_mode = state_sync::checkpoint;

  /// Bytes of written key states kept in memory, so a key that comes back
  /// is loaded without a read of the store (states not yet written are
  /// kept whatever this says); 0: none. rocksdb only.
  size_t state_cache_bytes = size_t{64} << 20;

  /// Whether a failed attempt's changes to the state are undone (keylane
  /// copies the state before each attempt). Turn off for a large state
  /// whose handler changes nothing before it knows it succeeds.
  bool state_rollback = true;

  /// Opens the store in place of the local one `state_store` names: a
  /// program's hook, not a config key (keylane::kafka's changelog store
  /// puts a Kafka topic in front of the local store this way). Used only
  /// when `state_store` is not none; loads then always ask the store (no
  /// `cache_bytes` cache), since it may change under the runtime.
  std::function<caf::expected<std::unique_ptr<keylane::state_store>>()>
    state_store_open;

  // -- [messaging] ----------------------------------------------------------

  /// Most messages between keys (`tell`, `ask`, due timers) sent and not
  /// yet ended, over the runtime. A handler's `tell` or `ask` past it gets
  /// `errc::messages_full` at once, never a wait. A guard against runaway
  /// fan-out, kept well above `window`: messages take window credit, so
  /// the window already bounds them to about its size times the fan-out.
  size_t messaging_max_in_flight = 1048576;

  /// Most `tell_after` timers pending at once; past it, `errc::timers_full`.
  size_t messaging_max_timers = 1000000;

  /// Whether a stateful handler's `tell`s are kept in its key's state and
  /// sent only once that state is written, and applied once by a stateful
  /// target, across kill -9 and restarts (docs/messaging.md, "Exactly
  /// once"). Off: they leave when the event ends, sooner, and a crash may
  /// lose or repeat one. Needs a `state.store` and a payload codec.
  bool messaging_exactly_once = true;

  // -- [log] ----------------------------------------------------------------

  /// Log threshold. `info` by default: nothing on the per-event path logs,
  /// and a reload's changes are logged at `info`.
  log_level log = log_level::info;

  /// The sink logs a stall when the event it waits for (global order) is
  /// older than this many milliseconds, and again when it clears; 0: never.
  size_t stall_ms = 1000;

  // -- [metrics] ------------------------------------------------------------

  /// "host:port" of the Prometheus text endpoint; empty: no endpoint.
  std::string metrics_listen;

  /// Whether the sink records the end-to-end latency histogram.
  bool metrics_latency = true;

  /// Request threads of the `metrics_listen` endpoint, 1 to 1024. Each
  /// connection holds one from accept to response, so idle or half-sent
  /// connections hold up scrapes only once they take all but a few. 16 by
  /// default (80 until 0.2.0): room for a few scrapers and stray
  /// connections; an endpoint untrusted peers can reach wants 80, which
  /// leaves 16 free under 64 held connections (docs/config.md).
  size_t metrics_threads = 16;

  // -- [handler] ------------------------------------------------------------

  /// Name of the registered handler to run.
  std::string handler;

  /// The handler's own table, `[handler.<name>]`.
  handler_params params;

  /// Where the settings came from ("<defaults>" or a file path).
  std::string origin = "<defaults>";
};

/// Settings shared read-only between threads (the live settings of a
/// runtime, replaced as a whole by a reload).
using settings_ptr = std::shared_ptr<const settings>;

/// Names of the enum values as written in the config file.
[[nodiscard]] const char* to_string(order_mode x) noexcept;
[[nodiscard]] const char* to_string(overflow_policy x) noexcept;
[[nodiscard]] const char* to_string(scheduler_policy x) noexcept;
[[nodiscard]] const char* to_string(log_level x) noexcept;
[[nodiscard]] const char* to_string(jitter_mode x) noexcept;
[[nodiscard]] const char* to_string(park_mode x) noexcept;
[[nodiscard]] const char* to_string(output_thread x) noexcept;
[[nodiscard]] const char* to_string(state_backend x) noexcept;
[[nodiscard]] const char* to_string(state_sync x) noexcept;
[[nodiscard]] const char* to_string(state_recovery x) noexcept;

} // namespace keylane
