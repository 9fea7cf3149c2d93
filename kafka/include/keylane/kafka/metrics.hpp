// SPDX-License-Identifier: Apache-2.0
#pragma once

// A Kafka source's counters for a program that serves Prometheus itself.
// Header-only, but it needs keylane::metrics as well as keylane::kafka
// (find_package(keylane COMPONENTS kafka metrics)).

#include <memory>
#include <utility>
#include <vector>

#include <prometheus/collectable.h>
#include <prometheus/metric_family.h>

#include "keylane/kafka/source.hpp"
#include "keylane/metrics.hpp"

namespace keylane::kafka {

namespace detail {

/// What a collectable needs of a source's insides.
struct source_access {
  static std::shared_ptr<const keylane::detail::read_gate>
  gate(const source& src) noexcept {
    return src.gate();
  }
};

/// The `keylane_kafka_*` families of `s`. The names are a contract with
/// users' dashboards (docs/metrics.md): add new ones, never rename one.
inline std::vector<prometheus::MetricFamily>
source_families(const source_stats& s) {
  using keylane::detail::counter_family;
  using keylane::detail::gauge_family;
  auto d = [](uint64_t x) { return static_cast<double>(x); };
  return {
    counter_family("keylane_kafka_consumed_total", "Records read from Kafka.",
                   d(s.consumed)),
    counter_family("keylane_kafka_submitted_total",
                   "Records accepted by the runtime.", d(s.submitted)),
    counter_family("keylane_kafka_finished_total",
                   "Records finished: their offsets may be committed.",
                   d(s.finished)),
    counter_family("keylane_kafka_finished_late_total",
                   "Records finished after their partition was given up "
                   "(the new owner runs them again).",
                   d(s.finished_late)),
    counter_family("keylane_kafka_refused_total",
                   "Submits the runtime refused (full window or key "
                   "backlog); each pauses its partition.",
                   d(s.refused)),
    counter_family("keylane_kafka_pauses_total", "Times a partition paused.",
                   d(s.pauses)),
    counter_family("keylane_kafka_resumes_total",
                   "Times a paused partition resumed.", d(s.resumes)),
    counter_family("keylane_kafka_dropped_on_revoke_total",
                   "Records read but not taken because their partition was "
                   "revoked first.",
                   d(s.dropped_on_revoke)),
    counter_family("keylane_kafka_commits_total",
                   "Offset commits the broker accepted.", d(s.commits)),
    counter_family("keylane_kafka_commit_failures_total",
                   "Offset commits that failed.", d(s.commit_failures)),
    counter_family("keylane_kafka_assigned_total",
                   "Partition assignments seen.", d(s.assigned)),
    counter_family("keylane_kafka_revoked_total",
                   "Partition revocations seen.", d(s.revoked)),
    counter_family("keylane_kafka_revoke_timeouts_total",
                   "Revocations released with events still in flight.",
                   d(s.revoke_timeouts)),
    counter_family("keylane_kafka_produced_total",
                   "Output records queued to kafka.output_topic.",
                   d(s.produced)),
    counter_family("keylane_kafka_output_delivered_total",
                   "Output records the broker acknowledged.", d(s.delivered)),
    counter_family("keylane_kafka_output_failures_total",
                   "Output records refused or failed for good.",
                   d(s.output_failures)),
    counter_family("keylane_kafka_state_durable_total",
                   "Records whose keyed state the runtime reported durable.",
                   d(s.state_durable)),
    counter_family("keylane_kafka_state_durable_late_total",
                   "Durable reports that came after their partition was "
                   "given up.",
                   d(s.state_durable_late)),
    counter_family("keylane_kafka_restores_total",
                   "Partitions restored from the changelog topic.",
                   d(s.restores)),
    counter_family("keylane_kafka_records_restored_total",
                   "Changelog records read by restores.",
                   d(s.records_restored)),
    counter_family("keylane_kafka_restore_bytes_total",
                   "Changelog bytes read by restores.", d(s.restore_bytes)),
    counter_family("keylane_kafka_restore_seconds_total",
                   "Time spent restoring partitions from the changelog.",
                   static_cast<double>(s.restore_ms) / 1000.0),
    counter_family("keylane_kafka_restore_failures_total",
                   "Restores that failed (retried).",
                   d(s.restore_failures)),
    counter_family("keylane_kafka_changelog_records_total",
                   "State records written to the changelog topic.",
                   d(s.changelog_records)),
    counter_family("keylane_kafka_changelog_bytes_total",
                   "Bytes written to the changelog topic.",
                   d(s.changelog_bytes)),
    counter_family("keylane_kafka_changelog_dropped_total",
                   "State writes not sent: their partition had moved on.",
                   d(s.changelog_dropped)),
    gauge_family("keylane_kafka_awaiting_state",
                 "Records whose output was handled, waiting for their "
                 "keyed state to be durable.",
                 d(s.awaiting_state)),
    gauge_family("keylane_kafka_lag",
                 "Records behind the assigned partitions' ends, from each "
                 "one's oldest unfinished record.",
                 d(s.lag)),
  };
}

} // namespace detail

/// `src`'s counters (`source_stats`) as a prometheus-cpp collectable, the
/// `keylane_kafka_*` families of docs/metrics.md; register it as
/// `keylane::metrics_collectable(src.lanes())` (keylane/metrics.hpp), which
/// gives the runtime's. Once `src` stops it yields nothing, so it may
/// outlive `src`.
///
/// Thread-safety: `Collect` may run on any thread, several at once.
[[nodiscard]] inline std::shared_ptr<prometheus::Collectable>
metrics_collectable(const source& src) {
  const auto* s = &src;
  return keylane::detail::gated_collectable(
    detail::source_access::gate(src),
    [s] { return detail::source_families(s->stats()); });
}

} // namespace keylane::kafka
