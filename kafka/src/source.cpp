// SPDX-License-Identifier: Apache-2.0
#include "keylane/kafka/source.hpp"

#include <chrono>
#include <cstdio>

#include "keylane/errc.hpp"
#include "source_state.hpp"

namespace keylane::kafka {

// -- source -----------------------------------------------------------------------

caf::expected<std::unique_ptr<source>>
source::start(config cfg, const handler_registry& reg, callback on_output,
              commit_listener on_commit) {
  auto make = reg.find<record, std::string>(cfg.runtime.handler);
  if (!make)
    return std::move(make.error());
  return start(std::move(cfg), std::move(*make), std::move(on_output),
               std::move(on_commit));
}

caf::expected<std::unique_ptr<source>>
source::start(config cfg, handler_factory make, callback on_output,
              commit_listener on_commit) {
  if (cfg.source.bootstrap_servers.empty() || cfg.source.group.empty()
      || cfg.source.topics.empty())
    return make_error(errc::invalid_config,
                      cfg.source.origin
                        + ": kafka.bootstrap_servers, kafka.group and "
                          "kafka.topics are required");
  auto st = std::make_unique<state>();
  st->user_output = std::move(on_output);
  st->on_commit = std::move(on_commit);
  // Submits must never block the polling thread: a full runtime pauses
  // the partition instead.
  cfg.runtime.overflow = overflow_policy::reject;
  st->cfg = std::move(cfg);
  const auto& ks = st->cfg.source;
  auto* raw = st.get();
  // Before the runtime: its first output may come as soon as it runs.
  if (!ks.output_topic.empty()) {
    auto w = output_writer::start(
      ks, [raw](const output_ticket& t, rd_kafka_resp_err_t err) {
        raw->delivered(t, err);
      });
    if (!w)
      return std::move(w.error());
    st->writer = std::move(*w);
  }
  if (!ks.changelog_topic.empty())
    if (auto err = st->open_changelog())
      return err;
  auto rt = record_runtime::start(st->cfg.runtime, std::move(make),
                                  [raw](record_event& ev) {
                                    raw->on_output(ev);
                                  });
  if (!rt)
    return std::move(rt.error());
  st->rt = std::move(*rt);
  // Before the first record: a record's offset then finishes only once
  // its key's state after it is durable, so a commit never passes state
  // a crash could still lose.
  st->keeps_state = st->cfg.runtime.state_store != state_backend::none;
  if (st->keeps_state)
    st->rt->on_state_durable([raw](const std::vector<uint64_t>& seqs) {
      raw->state_durable(seqs);
    });

  auto conf = rdkafka::new_conf();
  std::vector<std::pair<std::string, std::string>> props{
    {"bootstrap.servers", ks.bootstrap_servers},
    {"group.id", ks.group},
    {"enable.auto.commit", "false"},
    {"enable.auto.offset.store", "false"},
    {"auto.offset.reset", "earliest"},
  };
  for (const auto& kv : ks.properties)
    props.emplace_back(kv);
  for (const auto& [name, value] : props)
    if (auto err = rdkafka::set(*conf, name, value, ks.origin, "kafka")) {
      st->rt->stop();
      return err;
    }
  rd_kafka_conf_set_opaque(conf.get(), raw);
  rd_kafka_conf_set_rebalance_cb(
    conf.get(), [](rd_kafka_t*, rd_kafka_resp_err_t err,
                   rd_kafka_topic_partition_list_t* list, void* opaque) {
      auto* self = static_cast<state*>(opaque);
      if (err == RD_KAFKA_RESP_ERR__ASSIGN_PARTITIONS) {
        self->assign(list);
      } else if (err == RD_KAFKA_RESP_ERR__REVOKE_PARTITIONS) {
        self->revoke(list);
      } else {
        self->warn("rebalance: " + rdkafka::to_string(err));
        rd_kafka_assign(self->rk.get(), nullptr);
      }
    });
  rd_kafka_conf_set_offset_commit_cb(
    conf.get(), [](rd_kafka_t*, rd_kafka_resp_err_t err,
                   rd_kafka_topic_partition_list_t* offsets, void* opaque) {
      static_cast<state*>(opaque)->committed(err, offsets);
    });
  auto rk = rdkafka::new_client(RD_KAFKA_CONSUMER, std::move(conf),
                                "kafka consumer");
  if (!rk) {
    st->rt->stop();
    return std::move(rk.error());
  }
  st->rk = std::move(*rk);
  rd_kafka_poll_set_consumer(st->rk.get());
  auto topics = rdkafka::new_list(static_cast<int>(ks.topics.size()));
  for (const auto& t : ks.topics)
    rdkafka::add(*topics, t, RD_KAFKA_PARTITION_UA);
  auto sub = rd_kafka_subscribe(st->rk.get(), topics.get());
  if (sub) {
    st->rk.reset();
    st->rt->stop();
    return make_error(errc::startup_failed,
                      "kafka subscribe: " + rdkafka::to_string(sub));
  }
  {
    std::lock_guard<std::mutex> guard{st->mu};
    st->ends_rk = st->rk.get();
  }
  if (st->changelog)
    st->restorer = std::thread{[raw] { raw->restore_loop(); }};
  st->poller = std::thread{[raw] { raw->run(); }};
  return std::unique_ptr<source>{new source(std::move(st))};
}

source::source(std::unique_ptr<state> st) : st_(std::move(st)) {}

source::~source() {
  stop();
}

stop_report source::stop() {
  if (st_->stopped)
    return st_->last_report;
  st_->stopped = true;
  st_->gate->close(); // no collect reads a source that is stopping
  st_->stopping = true;
  if (st_->poller.joinable())
    st_->poller.join();
  st_->stop_restorer();
  {
    std::lock_guard<std::mutex> guard{st_->mu};
    st_->ends_rk = nullptr;
  }
  st_->rk.reset(); // left its group at the end of `run`
  st_->last_report = st_->rt->stop();
  // After the runtime: no output comes any more. What is delivered now
  // is not committed (the group was left): the next owner runs it again.
  if (st_->writer)
    st_->writer->close(std::chrono::seconds(10));
  return st_->last_report;
}

source_stats source::stats() const {
  const auto& n = st_->n;
  source_stats s;
  s.consumed = n.consumed;
  s.submitted = n.submitted;
  s.finished = n.finished;
  s.finished_late = n.finished_late;
  s.refused = n.refused;
  s.pauses = n.pauses;
  s.resumes = n.resumes;
  s.dropped_on_revoke = n.dropped_on_revoke;
  s.commits = n.commits;
  s.commit_failures = n.commit_failures;
  s.assigned = n.assigned;
  s.revoked = n.revoked;
  s.revoke_timeouts = n.revoke_timeouts;
  s.produced = n.produced;
  s.delivered = n.delivered;
  s.output_failures = n.output_failures;
  s.state_durable = n.state_durable;
  s.state_durable_late = n.state_durable_late;
  s.restores = n.restores;
  s.records_restored = n.records_restored;
  s.restore_bytes = n.restore_bytes;
  s.restore_ms = n.restore_ms;
  s.restore_failures = n.restore_failures;
  if (st_->changelog) {
    auto r = std::memory_order_relaxed;
    s.changelog_records = st_->changelog->records_written.load(r);
    s.changelog_bytes = st_->changelog->bytes_written.load(r);
    s.changelog_dropped = st_->changelog->records_dropped.load(r);
  }
  {
    std::lock_guard<std::mutex> guard{st_->mu};
    for (const auto& [id, p] : st_->parts) {
      s.awaiting_state += p->tracker.awaiting_state();
      s.lag += st_->lag_of(*p);
    }
  }
  return s;
}

const std::shared_ptr<keylane::detail::read_gate>&
source::gate() const noexcept {
  return st_->gate;
}


record_runtime& source::lanes() noexcept {
  return *st_->rt;
}

keylane::key source::key_of(const record& r, const source_settings& s) {
  const std::string* k = nullptr;
  if (s.key == key_from::header)
    k = r.header(s.key_header);
  else if (!r.key.empty())
    k = &r.key;
  if (k)
    return keylane::key{*k};
  return keylane::key{r.topic + '/' + std::to_string(r.partition)};
}

} // namespace keylane::kafka
