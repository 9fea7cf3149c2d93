// SPDX-License-Identifier: Apache-2.0
#include "kafka_ways.hpp"

#include <atomic>
#include <chrono>
#include <filesystem>
#include <memory>
#include <thread>
#include <vector>

#include "keylane/errc.hpp"
#include "keylane/kafka/source.hpp"
#include "rdkafka.hpp" // keylane::kafka's librdkafka owners (private)
#include "../item.hpp"
#include "count_state.hpp"
#include "keylane/stateful_handler.hpp"

namespace keylane::bench::kafka {

namespace kk = keylane::kafka;

namespace {

using clk = std::chrono::steady_clock;

// A run that has not finished after this is reported incomplete: 30 s
// plus every record's handler time one after another (the slowest way).
clk::duration run_limit(const workload& w) {
  return std::chrono::seconds(30)
         + std::chrono::microseconds(static_cast<int64_t>(w.records)
                                     * w.max_delay_us);
}

/// Per-key order of one run, written by one thread at a time.
class order_check {
public:
  explicit order_check(size_t keys) : next_(keys, 0) {}

  void see(const char* data, size_t size) {
    uint64_t key, n;
    int64_t delay;
    if (!parse_value(data, size, key, n, delay) || key >= next_.size()) {
      ++violations_;
      return;
    }
    if (n != next_[key])
      ++violations_;
    next_[key] = n + 1;
  }

  [[nodiscard]] uint64_t violations() const noexcept { return violations_; }

private:
  std::vector<uint64_t> next_;
  uint64_t violations_ = 0;
};

/// Notes the run's first record at a handler; the delay drawn for `r`.
int64_t arrive(std::atomic<int64_t>& first, const kk::record& r) {
  int64_t expected = 0;
  if (first.load(std::memory_order_relaxed) == 0)
    first.compare_exchange_strong(expected, now_ns());
  uint64_t key, n;
  int64_t delay_us = 0;
  parse_value(r.value.data(), r.value.size(), key, n, delay_us);
  return delay_us;
}

/// Finishes each record after the delay drawn for it, on its lane's timer.
struct timed_handler : keylane::handler<kk::record, std::string> {
  explicit timed_handler(std::atomic<int64_t>* first) : first_(first) {}
  std::atomic<int64_t>* first_;

  void on_event(kk::record& r, keylane::completion<std::string> done) override {
    auto delay_us = arrive(*first_, r);
    if (delay_us <= 0)
      return done.ok(std::string{});
    run_later(std::chrono::microseconds(delay_us),
              [d = std::make_shared<keylane::completion<std::string>>(
                 std::move(done))]() mutable { d->ok(std::string{}); });
  }
};

/// Per key, how many of its records finished (`count_state`): keyed
/// state, changed when a record's delay is over (as `timed_handler`
/// finishes it).
struct counting_handler
  : keylane::stateful_handler<kk::record, std::string, count_state> {
  explicit counting_handler(std::atomic<int64_t>* first) : first_(first) {}
  std::atomic<int64_t>* first_;

  void on_event(kk::record& r, keylane::completion<std::string> done) override {
    auto delay_us = arrive(*first_, r);
    if (delay_us <= 0) {
      state().n += 1;
      return done.ok(std::string{});
    }
    run_later(std::chrono::microseconds(delay_us),
              [this, d = std::make_shared<keylane::completion<std::string>>(
                       std::move(done))]() mutable {
                state().n += 1;
                d->ok(std::string{});
              });
  }
};

} // namespace

run_result run_consume_loop(const std::string& bootstrap, const workload& w) {
  namespace rdk = keylane::kafka::rdkafka;
  run_result out;
  auto conf = rdk::new_conf();
  for (auto [k, v] : {std::pair<const char*, const char*>{"group.id",
                                                          "bench-consume-loop"},
                      {"enable.auto.commit", "false"},
                      {"log_level", "2"}})
    (void) rdk::set(*conf, k, v);
  (void) rdk::set(*conf, "bootstrap.servers", bootstrap);
  std::string why;
  auto rk = rdk::new_client(RD_KAFKA_CONSUMER, std::move(conf), why);
  if (!rk) {
    out.error = "consumer: " + why;
    return out;
  }
  rd_kafka_poll_set_consumer(rk.get());
  auto l = rdk::new_list(w.partitions);
  for (int p = 0; p < w.partitions; ++p)
    rdk::add(*l, w.topic, p).offset = RD_KAFKA_OFFSET_BEGINNING;
  rd_kafka_assign(rk.get(), l.get());
  order_check order{w.keys};
  int64_t first = 0, last = 0;
  auto deadline = clk::now() + run_limit(w);
  while (out.finished < w.records && clk::now() < deadline) {
    auto m = rdk::consumer_poll(rk.get(), 100);
    if (!m)
      continue;
    if (!m->err) {
      if (first == 0)
        first = now_ns();
      // Per partition, not per key: the loop keeps partition order, and
      // a key lives in one partition.
      order.see(static_cast<const char*>(m->payload), m->len);
      ++out.finished;
      last = now_ns();
    }
  }
  rd_kafka_consumer_close(rk.get());
  rk.reset();
  out.completed = out.finished == w.records;
  out.violations = order.violations();
  out.total_s = static_cast<double>(last - first) * 1e-9;
  return out;
}

namespace {

kk::config base_config(const std::string& bootstrap, const workload& w,
                       size_t concurrency, const std::string& group) {
  kk::config cfg;
  auto& rt = cfg.runtime;
  rt.order = keylane::order_mode::none; // offsets finish as events do
  rt.threads = 2;
  rt.max_active_keys = concurrency;
  rt.log = keylane::log_level::warning;
  auto& ks = cfg.source;
  ks.bootstrap_servers = bootstrap;
  ks.group = group;
  ks.topics = {w.topic};
  ks.origin = "keylane_kafka_bench";
  // The mock waits session.timeout.ms - 1 s at every join and leave;
  // below 3 s its group never formed here (2.0.2). It also holds a fetch
  // that finds nothing for fetch.wait.max.ms (500 ms by default), and a
  // partition that becomes fetchable meanwhile waits for it: about one run
  // in six took 0.7-1.2 s instead of 0.3 s, and none of 30 with 10 ms.
  // A broker answers when records arrive; 10 ms keeps the mock's wait out
  // of the figures.
  ks.properties = {{"session.timeout.ms", "3000"},
                   {"heartbeat.interval.ms", "300"},
                   {"fetch.wait.max.ms", "10"},
                   {"log_level", "2"}};
  return cfg;
}

/// Runs `cfg` with handlers from `make` until every record finished.
run_result run_source(kk::config cfg, keylane::handler_factory make,
                      const workload& w, std::atomic<int64_t>& first) {
  run_result out;
  std::atomic<uint64_t> finished{0};
  std::atomic<int64_t> last{0};
  order_check order{w.keys};
  auto src = kk::source::start(
    std::move(cfg), std::move(make), [&](kk::record_event& ev) {
      // The runtime's one consumer thread: order needs no lock.
      order.see(ev.payload.value.data(), ev.payload.value.size());
      last.store(now_ns(), std::memory_order_relaxed);
      finished.fetch_add(1, std::memory_order_release);
    });
  if (!src) {
    out.error = keylane::render(src.error());
    return out;
  }
  auto deadline = clk::now() + run_limit(w);
  // Polls a counter the output bumps; sleeping, so it takes no core.
  while (finished.load(std::memory_order_acquire) < w.records
         && clk::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  out.finished = finished.load(std::memory_order_acquire);
  out.completed = out.finished == w.records;
  out.violations = order.violations(); // read after the count: all seen
  out.total_s = static_cast<double>(last.load() - first.load()) * 1e-9;
  (*src)->stop();
  return out;
}

} // namespace

run_result run_keylane(const std::string& bootstrap, const workload& w,
                       keyed_by by, size_t concurrency,
                       const std::string& group) {
  auto cfg = base_config(bootstrap, w, concurrency, group);
  cfg.runtime.handler = "timed_handler";
  auto& ks = cfg.source;
  if (by == keyed_by::partition) {
    ks.key = kk::key_from::header;
    ks.key_header = "part";
  } else if (by == keyed_by::record_id) {
    ks.key = kk::key_from::header;
    ks.key_header = "id";
  }
  std::atomic<int64_t> first{0};
  auto make = [&first](const keylane::handler_params&) {
    return std::make_unique<timed_handler>(&first);
  };
  return run_source(std::move(cfg), make, w, first);
}

run_result run_keylane_state(const std::string& bootstrap, const workload& w,
                             state_kept kept, size_t concurrency,
                             const std::string& group, const std::string& dir,
                             const std::string& changelog) {
  auto cfg = base_config(bootstrap, w, concurrency, group);
  cfg.runtime.handler = "counting_handler";
  if (kept != state_kept::none) {
    cfg.runtime.state_store = keylane::state_backend::rocksdb;
    cfg.runtime.state_path = dir + "/" + group;
  }
  if (kept == state_kept::changelog)
    cfg.source.changelog_topic = changelog;
  std::atomic<int64_t> first{0};
  auto make = [&first](const keylane::handler_params&) {
    return std::make_unique<counting_handler>(&first);
  };
  auto out = run_source(std::move(cfg), make, w, first);
  std::error_code ec;
  std::filesystem::remove_all(dir + "/" + group, ec);
  std::filesystem::remove(dir + "/" + group + ".changelog", ec);
  return out;
}

} // namespace keylane::bench::kafka
