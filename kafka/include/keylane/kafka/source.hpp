// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include <caf/expected.hpp>

#include "keylane/handler_registry.hpp"
#include "keylane/kafka/config_loader.hpp"
#include "keylane/kafka/record.hpp"
#include "keylane/kafka/source_settings.hpp"
#include "keylane/kafka/source_stats.hpp"
#include "keylane/runtime.hpp"

namespace keylane::detail {
class read_gate;
} // namespace keylane::detail

namespace keylane::kafka {

namespace detail {
struct source_access;
} // namespace detail

/// The keylane runtime a source feeds: Kafka records in, bytes out.
using record_runtime = runtime<record, std::string>;

/// The event type its output callback sees.
using record_event = record_runtime::event_type;

/// A Kafka consumer-group member that submits every record of its
/// partitions to a keylane runtime, keyed by the record key (or a header),
/// and commits, per partition, only offsets below which every record
/// finished: at-least-once delivery with per-key order.
///
/// A record is *finished* when its event ended (ok, skipped, failed; parked
/// only with `park.store = "sqlite"`) and the output callback returned,
/// and, with `kafka.output_topic`, once the broker acknowledged its output
/// record: results go to the output topic, keyed as their input, in the
/// runtime's output order, through an idempotent producer; skipped, failed
/// and parked events get a record marked by its `keylane.outcome` header
/// (or none, `kafka.output_tombstones = "skip"`).
/// With keyed state (`state.store` not "none") a record that did not park
/// finishes only once the runtime also reported its state change durable
/// (`runtime::on_state_durable`): no commit passes state a crash could
/// lose, so with a `stateful_handler` each record changes its key's state
/// exactly once across crashes (redelivered ones end `skipped`; see
/// `state_origin<kafka::record>` and docs/kafka.md).
/// Offsets are committed every `commit_interval_ms` and when a partition is
/// revoked. A crashed consumer's uncommitted records are redelivered to the
/// partition's next owner, so a handler may see a record twice (never one
/// below a committed offset); `record` carries topic, partition and offset
/// to deduplicate by.
///
/// A full window or key backlog pauses the record's partition (the record
/// is held, in order, with those behind it) and resumes it as work drains:
/// nothing is dropped and the memory held is bounded. The runtime's
/// `overflow` is set to `reject` for this; the source never blocks.
///
/// Thread-safety: one thread of its own polls Kafka, serves rebalances and
/// commits; the output callback runs on the runtime's consumer thread,
/// which also writes the output records; a second thread of its own serves
/// their delivery reports; with keyed state, the runtime's state writer
/// thread reports durable records.
/// `stats` and `lanes` may be called from any thread, `stop` once, by the
/// owner.
class source {
public:
  /// Called on the runtime's consumer thread for every event, in the
  /// runtime's output order, before its offset counts as finished.
  using callback = std::function<void(record_event&)>;

  /// Called on the polling thread for each partition offset the broker
  /// accepted as committed.
  using commit_listener = std::function<void(
    const std::string& topic, int32_t partition, int64_t offset)>;

  /// Starts the runtime (handler `rt.handler` from `reg`) and joins the
  /// group. Fails on invalid settings or when librdkafka refuses them.
  [[nodiscard]] static caf::expected<std::unique_ptr<source>>
  start(config cfg, const handler_registry& reg, callback on_output = {},
        commit_listener on_commit = {});

  /// Starts with an explicit handler factory.
  [[nodiscard]] static caf::expected<std::unique_ptr<source>>
  start(config cfg, handler_factory make, callback on_output = {},
        commit_listener on_commit = {});

  /// Calls `stop()` if needed.
  ~source();

  source(const source&) = delete;
  source& operator=(const source&) = delete;

  /// Leaves the group gracefully: stops reading, lets in-flight events
  /// finish within `revoke_timeout_ms`, commits what finished, then stops
  /// the runtime and reports what did not finish.
  stop_report stop();

  /// A snapshot of the source's counters.
  [[nodiscard]] source_stats stats() const;

  /// The runtime the records run in (stats, parked keys, replay).
  [[nodiscard]] record_runtime& lanes() noexcept;

  /// The keylane key of `r` under `s`.
  [[nodiscard]] static keylane::key key_of(const record& r,
                                           const source_settings& s);

  struct state;

private:
  // keylane/kafka/metrics.hpp reads `stats` through the gate `stop` closes.
  friend struct detail::source_access;
  [[nodiscard]] const std::shared_ptr<keylane::detail::read_gate>&
  gate() const noexcept;

  explicit source(std::unique_ptr<state> st);
  std::unique_ptr<state> st_;
};

} // namespace keylane::kafka
