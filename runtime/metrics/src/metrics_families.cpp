// SPDX-License-Identifier: Apache-2.0
#include "metrics_families.hpp"

#include <chrono>
#include <limits>
#include <string>
#include <utility>

#include "keylane/config.hpp"
#include "keylane/detail/counters.hpp"

namespace keylane::detail {

namespace {

using prometheus::ClientMetric;
using prometheus::MetricFamily;
using prometheus::MetricType;

MetricFamily family(const std::string& name, const std::string& help,
                    MetricType type) {
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
  return gauge_family(name, help, value);
}

MetricFamily counter(const char* name, const char* help, double value) {
  return counter_family(name, help, value);
}

double seconds(std::chrono::nanoseconds d) {
  return std::chrono::duration<double>(d).count();
}

MetricFamily histogram(const char* name, const char* help,
                       const latency_histogram& h) {
  auto f = family(name, help, MetricType::Histogram);
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

MetricFamily counter_family(const std::string& name, const std::string& help,
                            double value) {
  auto f = family(name, help, MetricType::Counter);
  f.metric.push_back(sample(MetricType::Counter, value));
  return f;
}

MetricFamily gauge_family(const std::string& name, const std::string& help,
                          double value) {
  auto f = family(name, help, MetricType::Gauge);
  f.metric.push_back(sample(MetricType::Gauge, value));
  return f;
}

std::vector<MetricFamily> runtime_families(const metrics_source& src) {
  return metric_families(src.stats(), src.parked());
}

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
    gauge("keylane_ingress_depth",
          "Events accepted that no shard has taken yet (approximate): "
          "waiting for the supervisor or in a shard's inbox.",
          d(s.ingress_depth)),
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
    histogram("keylane_latency_seconds",
              "End-to-end latency of delivered events, from submit "
              "accepting an event to the sink passing it on (counted "
              "while metrics.latency is on).",
              s.latency),
    counter("keylane_state_loads_total",
            "Key states loaded, one per activation of a stateful handler.",
            d(s.state_loads)),
    counter("keylane_state_load_failures_total",
            "State loads that failed (the store, or a record that does not "
            "decode); the activation is retried like a failed attempt.",
            d(s.state_load_failures)),
    histogram("keylane_state_load_seconds",
              "How long a state load took (the store's read).",
              s.state_load_latency),
    counter("keylane_state_writes_total", "Key states written to the store.",
            d(s.state_writes)),
    counter("keylane_state_write_bytes_total",
            "Bytes of the key states written to the store.",
            d(s.state_write_bytes)),
    counter("keylane_state_checkpoints_total",
            "State batches written (one atomic, synced write each).",
            d(s.state_checkpoints)),
    counter("keylane_state_write_failures_total",
            "State batch writes the store refused (each is retried).",
            d(s.state_write_failures)),
    gauge("keylane_state_pending",
          "Key states taken and not yet written to the store.",
          d(s.state_pending)),
    gauge("keylane_state_checkpoint_age_seconds",
          "While key states wait to be written: seconds since the last "
          "state batch was written; 0 when nothing waits.",
          seconds(s.state_checkpoint_age)),
    counter("keylane_messages_sent_total",
            "Messages between keys sent (tell, ask, fired timers, kept "
            "messages sent again at start).",
            d(s.messages_sent)),
    counter("keylane_messages_refused_total",
            "tell and ask calls refused with messages_full "
            "(messaging.max_in_flight).",
            d(s.messages_refused)),
    gauge("keylane_messages_in_flight",
          "Messages sent, held by a running attempt or kept for a state "
          "write, whose events have not ended.",
          d(s.messages_in_flight)),
    counter("keylane_asks_total", "asks sent.", d(s.asks)),
    counter("keylane_ask_timeouts_total",
            "asks answered with ask_timeout.", d(s.ask_timeouts)),
    gauge("keylane_timers_pending", "tell_after timers waiting to fire.",
          d(s.timers_pending)),
    counter("keylane_timers_fired_total", "tell_after timers that fired.",
            d(s.timers_fired)),
    counter("keylane_timers_cancelled_total",
            "tell_after timers cancelled before they fired.",
            d(s.timers_cancelled)),
  };
  // The counters the actors publish, from their one list.
#define KEYLANE_X(field, kind, metric_name, help_text, src)                    \
  if (*metric_name != '\0') {                                                  \
    auto f = family(metric_name, help_text, MetricType::kind);                 \
    f.metric.push_back(sample(MetricType::kind, d(s.field)));                  \
    out.push_back(std::move(f));                                               \
  }
  KEYLANE_PUBLISHED_COUNTERS(KEYLANE_X)
#undef KEYLANE_X
  out.push_back(counter("keylane_park_write_failures_total",
                        "Parkings the park store refused (each is tried "
                        "again until it works).",
                        d(s.park_write_failures)));
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
