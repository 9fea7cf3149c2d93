// SPDX-License-Identifier: Apache-2.0
#pragma once

// The common interface of the ways compared: baselines and keylane.

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <keylane/latency.hpp>

#include "item.hpp"
#include "output.hpp"

namespace keylane::bench {

/// Keyed-state figures of one run of a stateful way (`keylane_state*`),
/// from `keylane::runtime::stats()`.
struct state_figures {
  /// Key states loaded (one per lane activation) and how long each took.
  uint64_t loads = 0;
  uint64_t load_failures = 0;
  latency_histogram load_latency;
  /// Key states written, their bytes, and the batches they went in.
  uint64_t writes = 0;
  uint64_t write_bytes = 0;
  uint64_t checkpoints = 0;
  uint64_t write_failures = 0;
};

/// One way of processing keyed events. The driver calls, in this order:
/// `start`, `submit` for every event (from one producer thread), waits on
/// the output until all were delivered, `settle`, then `stop`. A way
/// object is used for one run only.
class way {
public:
  virtual ~way() = default;

  /// Starts threads or actors; every processed event goes to `out`, after
  /// `work_iters` rounds of `do_work`. Returns an error text or "".
  virtual std::string start(output& out, uint64_t work_iters) = 0;

  /// Hands one event to the way (producer thread only). Returns false if
  /// the way refused it (counts as an incomplete run).
  virtual bool submit(const item& it) = 0;

  /// After every event was delivered: waits up to `timeout` until the way
  /// holds no per-key state it would drop when idle (keylane: all lanes
  /// retired). False when it did not get there.
  virtual bool settle(std::chrono::milliseconds) { return true; }

  /// Lanes (per-key actors) started during the run; 0 for ways without.
  [[nodiscard]] virtual uint64_t lanes_spawned() const { return 0; }

  /// Submits the way turned away for now (keylane with `runtime.overflow =
  /// reject`: a full window or key backlog) and `submit` then retried until
  /// taken; 0 for ways that only block.
  [[nodiscard]] virtual uint64_t rejected_submits() const { return 0; }

  /// The keyed-state figures so far (stateful ways), or nothing.
  [[nodiscard]] virtual std::optional<state_figures> keyed_state() const {
    return std::nullopt;
  }

  /// Ends threads and actors. Returns a note on anything odd, or "".
  virtual std::string stop() = 0;
};

/// A way with its report name and variant.
struct way_spec {
  /// single_loop, shared_queue, hash_partitions, asio_strand, caf_naive,
  /// keylane_none, keylane_per_key, keylane_global, keylane_state,
  /// keylane_state_memory, ordered_partitions or keyed_partitions.
  std::string name;
  /// True when the way promises per-key order (violations fail the run).
  bool ordered = true;
  /// CAF scheduler of a keylane way ("sharing" or "stealing"), else "".
  std::string scheduler;
  /// The state store of a stateful way ("rocksdb" or "memory"), else "".
  std::string state_store;
  /// Worker threads the way runs with (`--threads`); 1 for single_loop,
  /// which runs on the producer thread.
  int threads = 1;
  /// Builds a fresh instance.
  std::function<std::unique_ptr<way>()> make;
};

/// Names of all ways, in report order.
[[nodiscard]] const std::vector<std::string>& way_names();

/// The ways run when `--ways` is not given: all but the keyed-state ones
/// (`keylane_state`, `keylane_state_memory`), `ordered_partitions` and
/// `keyed_partitions`, which run on request.
[[nodiscard]] std::vector<std::string> default_way_names();

/// The specs of `names` (in report order), each way with worker threads
/// at every count of `threads` (single_loop once, with 1), with every
/// scheduler in `schedulers` for the keylane ways, whose settings get the
/// overrides `sets` ("section.key=value", checked by
/// `check_keylane_overrides`).
[[nodiscard]] std::vector<way_spec>
make_way_specs(const std::vector<std::string>& names,
               const std::vector<std::string>& schedulers,
               const std::vector<int>& threads,
               const std::vector<std::string>& sets);

// One factory per way, each in its own file under ways/; `threads` is the
// way's count of worker threads (>= 1).
std::unique_ptr<way> make_single_loop();
/// `threads` consumers of one queue.
std::unique_ptr<way> make_shared_queue(int threads);
/// `threads` partitions, one worker thread each.
std::unique_ptr<way> make_hash_partitions(int threads);
/// hash_partitions with outputs re-sequenced into submission order (the
/// promise of keylane_global) and a window of 65,536: on request only.
std::unique_ptr<way> make_ordered_partitions(int threads);
std::unique_ptr<way> make_keyed_partitions(int threads);
std::unique_ptr<way> make_keyed_slots(int threads);
/// keylane's shape (CAF shard and sink actors, lanes with queues, heap
/// events) with no keylane code: on request only. `threads` CAF workers
/// and as many shards.
std::unique_ptr<way> make_caf_lanes(int threads);
/// caf_lanes with keylane ways' cap of live keys (on request).
std::unique_ptr<way> make_caf_lanes_capped(int threads);
/// caf_lanes plus what keylane_per_key pays per event for its promises
/// (on request; $KEYLANE_BENCH_FLOOR_WITHOUT leaves some out).
std::unique_ptr<way> make_caf_lanes_featured(int threads);
/// An io_context run by `threads` threads.
std::unique_ptr<way> make_asio_strand(int threads);
/// CAF's default config but for `threads` workers.
std::unique_ptr<way> make_caf_naive(int threads);
/// The CAF version and default scheduler caf_naive runs with.
[[nodiscard]] std::string caf_default_description();
/// keylane with `scheduler.threads = threads` (and so as many shards,
/// unless `sets` says otherwise).
std::unique_ptr<way> make_keylane(const std::string& order,
                                  const std::string& scheduler, int threads,
                                  const std::vector<std::string>& sets);
/// keylane_per_key with a `keylane::stateful_handler` keeping a small
/// per-key state in `store` ("rocksdb": a fresh temporary directory per
/// run, removed after it; "memory").
std::unique_ptr<way> make_keylane_state(const std::string& store,
                                        const std::string& scheduler,
                                        int threads,
                                        const std::vector<std::string>& sets);

/// keylane_per_key with each event sent through a front key whose handler
/// `tell`s it to the event's key (on request only).
std::unique_ptr<way> make_keylane_tell(const std::string& scheduler,
                                       int threads,
                                       const std::vector<std::string>& sets);

/// Checks `--set` overrides of the keylane ways: valid for keylane (as
/// `keylane::apply_overrides` sees them, on the ways' settings) and not of
/// a key the benchmark sets itself (runtime.order, scheduler.policy,
/// scheduler.threads, handler.*, state.store, state.path). Returns every
/// problem, one a line, or "".
[[nodiscard]] std::string
check_keylane_overrides(const std::vector<std::string>& sets);

/// The keylane ways' settings at `threads` with `sets` applied, as TOML
/// (`--print-config`; each way and row then sets runtime.order,
/// scheduler.policy and scheduler.threads).
[[nodiscard]] std::string
keylane_settings_toml(int threads, const std::vector<std::string>& sets);

/// The keylane ways' settings for the report: "threads = 2, ..." (or
/// "threads per row (1, 2, 4), ..." for a sweep), then the overrides.
[[nodiscard]] std::string
keylane_settings_note(const std::vector<int>& threads,
                      const std::vector<std::string>& sets);

} // namespace keylane::bench
