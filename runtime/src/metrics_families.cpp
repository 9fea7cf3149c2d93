#include "metrics_families.hpp"

#include <chrono>
#include <limits>
#include <string>
#include <utility>

#include "keylane/config.hpp"

namespace keylane::detail {

namespace {

using prometheus::ClientMetric;
using prometheus::MetricFamily;
using prometheus::MetricType;

MetricFamily family(const char* name, const char* help, MetricType type) {
  MetricFamily f;
  f.name = name;
  f.help = help;
  f.type = type;
  return f;
}

ClientMetric sample(MetricType type, double value,
                    std::vector<ClientMetric::Label> labels = {}) {
  ClientMetric m;
  m.label = std::move(labels);
  if (type == MetricType::Counter)
    m.counter.value = value;
  else
    m.gauge.value = value;
  return m;
}

MetricFamily gauge(const char* name, const char* help, double value) {
  auto f = family(name, help, MetricType::Gauge);
  f.metric.push_back(sample(MetricType::Gauge, value));
  return f;
}

MetricFamily counter(const char* name, const char* help, double value) {
  auto f = family(name, help, MetricType::Counter);
  f.metric.push_back(sample(MetricType::Counter, value));
  return f;
}

double seconds(std::chrono::nanoseconds d) {
  return std::chrono::duration<double>(d).count();
}

MetricFamily latency(const latency_histogram& h) {
  auto f = family("keylane_latency_seconds",
                  "End-to-end latency of delivered events, from submit "
                  "accepting an event to the sink passing it on (counted "
                  "while metrics.latency is on).",
                  MetricType::Histogram);
  ClientMetric m;
  // The snapshot reads each bucket and the count one by one while the sink
  // may record: the count is the buckets' sum, so the +Inf bucket always
  // equals _count, as Prometheus requires.
  uint64_t cumulative = 0;
  for (size_t i = 0; i < h.counts.size(); ++i) {
    cumulative += h.counts[i];
    auto bound = i < latency_histogram::bounds_us.size()
                   ? static_cast<double>(latency_histogram::bounds_us[i]) / 1e6
                   : std::numeric_limits<double>::infinity();
    m.histogram.bucket.push_back(ClientMetric::Bucket{cumulative, bound});
  }
  m.histogram.sample_count = cumulative;
  m.histogram.sample_sum = seconds(h.sum);
  f.metric.push_back(std::move(m));
  return f;
}

MetricFamily events(const keylane::stats& s) {
  auto f = family("keylane_events_total",
                  "Events that ended, by outcome: ok (a result), skipped "
                  "(the handler skipped it), failed (failed for good, not "
                  "parked), parked (moved to the park store).",
                  MetricType::Counter);
  const std::pair<const char*, uint64_t> outcomes[] = {
    {"ok", s.ok}, {"skipped", s.skipped}, {"failed", s.failed},
    {"parked", s.parked}};
  for (auto& [name, n] : outcomes)
    f.metric.push_back(sample(MetricType::Counter, static_cast<double>(n),
                              {{"outcome", name}}));
  return f;
}

} // namespace

std::vector<MetricFamily>
metric_families(const keylane::stats& s,
                const caf::expected<std::vector<parked_key>>& parked) {
  auto d = [](uint64_t x) { return static_cast<double>(x); };
  std::vector<MetricFamily> out{
    counter("keylane_accepted_total",
            "Events accepted by submit, plus those replay resubmitted.",
            d(s.accepted)),
    counter("keylane_delivered_total",
            "Events handed to the application (callback returned or pulled), "
            "tombstones included.",
            d(s.delivered)),
    counter("keylane_rejected_total",
            "Submit calls rejected, for any reason (window full, key "
            "backlog full, stopped).",
            d(s.rejected)),
    events(s),
    counter("keylane_retries_total",
            "Handler attempts beyond the first, over all events.",
            d(s.retries)),
    counter("keylane_replayed_total", "Parked events resubmitted by replay.",
            d(s.replayed)),
    gauge("keylane_ingress_depth",
          "Events accepted but not yet routed to a lane (approximate).",
          d(s.ingress_depth)),
    gauge("keylane_active_lanes",
          "Lanes alive now (one per key with work, lingering and retiring "
          "ones included); at most runtime.max_active_keys.",
          d(s.active_lanes)),
    gauge("keylane_peak_active_lanes", "Most lanes alive at once so far.",
          d(s.peak_active_lanes)),
    gauge("keylane_waiting_keys",
          "Keys with work waiting for a lane slot (the cap is reached).",
          d(s.waiting_keys)),
    counter("keylane_lane_spawns_total",
            "Lanes started, one per key activation (a lane is an object "
            "inside a shard actor).",
            d(s.lanes_spawned)),
    counter("keylane_lane_retires_total", "Lanes retired.",
            d(s.lanes_retired)),
    gauge("keylane_sink_buffered",
          "Results the sink holds back to restore order.",
          d(s.sink_buffered)),
    gauge("keylane_peak_sink_buffered",
          "Most results the sink held back at once so far.",
          d(s.peak_sink_buffered)),
    gauge("keylane_awaited_seq",
          "The sequence number the sink waits for (global order only).",
          d(s.awaited_seq)),
    gauge("keylane_awaited_age_seconds",
          "How long the sink has waited for keylane_awaited_seq while "
          "holding results back; 0 when nothing waits.",
          seconds(s.awaited_age)),
    gauge("keylane_window",
          "The admission window in force: events accepted but not yet "
          "delivered, at most (window = \"auto\" resizes it; with a spill "
          "file it is unbounded, or 0 while the file is full).",
          s.window == unbounded ? std::numeric_limits<double>::infinity()
                                : d(s.window)),
    counter("keylane_spilled_total",
            "Results the sink wrote to its spill file (sink.spill_path).",
            d(s.spilled)),
    gauge("keylane_spill_held", "Results in the spill file now.",
          d(s.spill_held)),
    gauge("keylane_spill_bytes", "Bytes in the spill file now.",
          d(s.spill_bytes)),
    latency(s.latency),
  };
  if (parked) {
    uint64_t events = 0;
    for (auto& pk : *parked)
      events += pk.count;
    out.push_back(gauge("keylane_parked_keys",
                        "Keys parked in the park store, waiting for replay "
                        "or discard.",
                        d(parked->size())));
    out.push_back(gauge("keylane_parked_events",
                        "Events in the park store, over all parked keys.",
                        d(events)));
  }
  return out;
}

} // namespace keylane::detail
