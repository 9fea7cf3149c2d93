// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <vector>

#include <caf/actor.hpp>
#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>
#include <caf/expected.hpp>

#include "keylane/config.hpp"
#include "keylane/detail/counters.hpp"
#include "keylane/detail/event_base.hpp"
#include "keylane/detail/ingress.hpp"
#include "keylane/detail/live_settings.hpp"
#include "keylane/detail/logger.hpp"
#include "keylane/detail/messaging.hpp"
#include "keylane/detail/output.hpp"
#include "keylane/detail/park_service.hpp"
#include "keylane/detail/payload_ops.hpp"
#include "keylane/detail/read_gate.hpp"
#include "keylane/detail/spill_file.hpp"
#include "keylane/detail/state_service.hpp"
#include "keylane/detail/stop_ledger.hpp"
#include "keylane/detail/waiter.hpp"
#include "keylane/errc.hpp"
#include "keylane/handler_registry.hpp"
#include "keylane/park_store.hpp"
#include "keylane/reload.hpp"
#include "keylane/stats.hpp"

namespace keylane::detail {

class inboxes;
class key_table;

/// The untyped core of a runtime: it builds the parts (ingress, output,
/// park service, live settings, stop ledger, counters) and the actor
/// system, starts the actors, and answers the facade's calls.
/// `runtime<P, R>` is a typed face over it.
///
/// Thread-safety: `submit`, `snapshot`, `try_pull`, `pull`, `drain`,
/// `reload` and the park calls may be called from any thread at once;
/// `stop` from one thread.
class engine {
public:
  using output_fn = output::output_fn;
  using make_fn = ingress::make_fn;
  using admission = ingress::admission;

  /// Builds the actor system and actors. Fails with `errc::startup_failed`.
  static caf::expected<std::unique_ptr<engine>>
  start(settings cfg, handler_factory make, output_fn out, payload_ops ops);

  ~engine();
  engine(const engine&) = delete;
  engine& operator=(const engine&) = delete;

  /// See `ingress::submit`. On the runtime's own threads (see
  /// `on_own_thread`) `block` acts as `reject`: the credit it would wait
  /// for can only come back through the thread that would be waiting.
  admission submit(const key& k, make_fn make, void* ctx) {
    return ingress_.submit(k, make, ctx, may_wait_ && !on_own_thread());
  }

  /// True on a thread of this runtime: the consumer thread that runs the
  /// output callback, or a worker of its actor system (handlers, and the
  /// user's actors spawned there). `submit` never waits there.
  [[nodiscard]] bool on_own_thread() const noexcept;

  /// Takes one delivered event without waiting (pull mode).
  [[nodiscard]] bool try_pull(event_ptr& out) { return output_.try_pull(out); }

  /// Takes one delivered event, waiting up to `timeout` (pull mode).
  [[nodiscard]] bool pull(event_ptr& out, std::chrono::nanoseconds timeout) {
    return output_.pull(out, timeout);
  }

  /// Waits until every accepted event was delivered; false on timeout, or
  /// once a stop has begun with events undelivered. Refused (false at
  /// once, logged) on the runtime's own threads: what it would wait for
  /// needs the thread it would hold.
  [[nodiscard]] bool drain(std::chrono::nanoseconds timeout);

  /// Rejects new events, ends the actors, reports what was not delivered.
  /// On the runtime's own threads it only begins that (`begin_stop`).
  stop_report stop();

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
  [[nodiscard]] settings_ptr live() const { return live_.get(); }

  /// Applies the run-time keys of `next` (see `reloads_at_run_time`); keys
  /// that need a restart keep their running value and are reported. On
  /// error nothing changes. Serialised: one reload at a time.
  [[nodiscard]] caf::expected<reload_report> reload(settings next);

  /// The actor system, for user actors the handlers talk to.
  [[nodiscard]] caf::actor_system& system() noexcept { return *system_; }

  /// The runtime's log.
  logger& log() noexcept { return log_; }

  /// The keyed-state service.
  state_service& state() noexcept { return *state_; }

  /// The gate a collectable outside the runtime reads it through
  /// (keylane/metrics.hpp); `stop` closes it first.
  [[nodiscard]] const std::shared_ptr<read_gate>& gate() const noexcept {
    return gate_;
  }

private:
  engine(settings cfg, output_fn out, payload_ops ops);
  static caf::error check_numbers(const settings& cfg);
  static size_t initial_window(const settings& cfg) noexcept;
  caf::error open_spill();
  caf::expected<uint64_t> ask_supervisor(bool replay, const key& k);
  void keep_unfinished(std::vector<event_ptr> evs);
  stop_report begin_stop();
  void end_actors();

  settings cfg_;
  payload_ops ops_;
  bool may_wait_; // overflow = block
  stop_report report_;
  alignas(64) std::atomic<bool> stopped_{false};
  std::atomic<bool> stop_begun_{false};
  // Guards the actor handles between a stop begun on the runtime's own
  // threads and the owner's stop, which clears them.
  std::mutex actors_mtx_;

  // Declared in the order they depend on each other.
  logger log_;
  waiter waiter_;
  counters pub_;
  live_settings live_;
  stop_ledger ledger_;
  std::unique_ptr<park_service> parks_;
  std::unique_ptr<state_service> state_;
  std::unique_ptr<spill_file> spill_;
  // Held by pointer so that runtime.hpp does not bring the queue and hash
  // table libraries into every user's compile: submit goes through
  // `ingress_`, which holds them by reference, so no event pays for it.
  std::unique_ptr<inboxes> inboxes_;
  std::unique_ptr<key_table> keys_;
  ingress ingress_;
  messaging messaging_;
  output output_;
  std::mutex reload_mtx_;

  std::unique_ptr<caf::actor_system_config> system_cfg_;
  std::unique_ptr<caf::actor_system> system_;
  caf::actor supervisor_;
  caf::actor sink_;
  // The `metrics.listen` endpoint, or null; scrapes call `snapshot` and
  // `parked_keys` on its threads. `stop` closes it first. A metrics_endpoint
  // owned through a deleter of keylane::metrics (detail/metrics_component.hpp), so
  // the core does not link the endpoint's code.
  std::shared_ptr<void> metrics_;
  // Shared with the collectables of keylane/metrics.hpp, which may outlive
  // the engine.
  std::shared_ptr<read_gate> gate_ = std::make_shared<read_gate>();
};

} // namespace keylane::detail
