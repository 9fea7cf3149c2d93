// SPDX-License-Identifier: Apache-2.0
#include "keylane/kafka/source.hpp"

#include <chrono>
#include <cstdio>

#include "keylane/errc.hpp"
#include "source_state.hpp"

namespace keylane::kafka {

namespace {

using clock = std::chrono::steady_clock;

record make_record(const rd_kafka_message_t& m, uint64_t assignment) {
  record r;
  r.topic = rd_kafka_topic_name(m.rkt);
  r.partition = m.partition;
  r.offset = m.offset;
  if (m.key)
    r.key.assign(static_cast<const char*>(m.key), m.key_len);
  if (m.payload)
    r.value.assign(static_cast<const char*>(m.payload), m.len);
  rd_kafka_timestamp_type_t type;
  r.timestamp_ms = rd_kafka_message_timestamp(&m, &type);
  rd_kafka_headers_t* hdrs = nullptr;
  // librdkafka's accessor takes a non-const message; it only parses.
  auto* mm = const_cast<rd_kafka_message_t*>(&m);
  if (rd_kafka_message_headers(mm, &hdrs) == RD_KAFKA_RESP_ERR_NO_ERROR) {
    const char* name;
    const void* val;
    size_t size;
    for (size_t i = 0;
         rd_kafka_header_get_all(hdrs, i, &name, &val, &size)
         == RD_KAFKA_RESP_ERR_NO_ERROR;
         ++i)
      r.headers.emplace_back(name, val ? std::string{static_cast<const char*>(
                                                       val),
                                                     size}
                                       : std::string{});
  }
  r.assignment = assignment;
  return r;
}

} // namespace

// -- polling thread ---------------------------------------------------------------

void source::state::run() {
  auto interval = std::chrono::milliseconds(cfg.source.commit_interval_ms);
  auto next_commit = clock::now() + interval;
  while (!stopping.load()) {
    // Held records are retried often: the runtime drains without telling.
    bool holding = retry_held();
    if (auto m = rdkafka::consumer_poll(rk.get(), holding ? 5 : 100))
      read(*m);
    if (clock::now() >= next_commit) {
      commit_all();
      next_commit = clock::now() + interval;
    }
  }
  // Revokes every partition through the rebalance callback: in-flight
  // events get their time, then what finished is committed.
  // The client itself is destroyed later, by `stop`.
  if (auto err = rd_kafka_consumer_close(rk.get()))
    warn("leaving the group: " + rdkafka::to_string(err));
}

void source::state::read(const rd_kafka_message_t& m) {
  if (m.err) {
    if (m.err != RD_KAFKA_RESP_ERR__PARTITION_EOF)
      warn(std::string{"consume: "} + rd_kafka_message_errstr(&m));
    return;
  }
  n.consumed++;
  auto p = find(rd_kafka_topic_name(m.rkt), m.partition);
  if (!p || p->revoked) {
    n.dropped_on_revoke++;
    return;
  }
  if (m.offset < p->next_read)
    return;
  p->next_read = m.offset + 1;
  auto r = make_record(m, p->assignment);
  if (p->held.empty() && !p->restoring && offer(*p, r))
    return;
  p->held.push_back(std::move(r));
  pause(*p, true);
}

bool source::state::offer(partition_state& p, record& r) {
  {
    std::lock_guard<std::mutex> guard{mu};
    if (p.tracker.outstanding() >= cfg.source.max_uncommitted)
      return false;
    // Taken before the submit: the event may finish before submit returns.
    p.tracker.take(r.offset);
  }
  auto k = source::key_of(r, cfg.source);
  if (rt->submit(k, std::move(r))) {
    n.submitted++;
    return true;
  }
  n.refused++;
  std::lock_guard<std::mutex> guard{mu};
  p.tracker.untake();
  return false;
}

bool source::state::retry_held() {
  bool holding = false;
  for (auto& [id, p] : parts) {
    if (p->restoring) {
      if (!p->restore_queued) {
        bool clear;
        {
          std::lock_guard<std::mutex> guard{mu};
          clear = drained(id);
        }
        if (!clear) {
          holding = true;
          continue;
        }
        start_restore(p);
      }
      if (!p->restored.load()) {
        holding = true; // polls often, to start it soon after
        continue;
      }
      // Restored: its writes go out from now on, and its events may run.
      p->restoring = false;
      changelog->own(p->partition, true);
      p->owned = true;
    }
    while (!p->held.empty() && offer(*p, p->held.front()))
      p->held.pop_front();
    if (p->held.empty() && p->paused)
      pause(*p, false);
    holding = holding || !p->held.empty();
  }
  return holding;
}

void source::state::pause(partition_state& p, bool on) {
  if (p.paused == on)
    return;
  auto l = rdkafka::new_list(1);
  auto& tp = rdkafka::add(*l, p.topic, p.partition);
  auto err = on ? rd_kafka_pause_partitions(rk.get(), l.get())
                : rd_kafka_resume_partitions(rk.get(), l.get());
  // librdkafka 2.0.2 does not wake its fetcher on a resume: the partition
  // waited up to a second for its next fetch. A seek to where reading
  // stopped starts the fetch at once (measured: keylane_kafka_rebalance_bench,
  // docs/kafka.md).
  if (!on && !err && p.next_read >= 0) {
    tp.offset = p.next_read;
    if (rdkafka::error_ptr e{rd_kafka_seek_partitions(rk.get(), l.get(), 0)})
      warn("seek on resume " + p.topic + '/' + std::to_string(p.partition)
           + ": " + rdkafka::to_string(e));
  }
  if (err)
    warn(std::string{on ? "pause " : "resume "} + p.topic + '/'
         + std::to_string(p.partition) + ": " + rdkafka::to_string(err));
  p.paused = on;
  (on ? n.pauses : n.resumes)++;
}

void source::state::resume_revoked(partition_state& p) {
  auto l = rdkafka::new_list(1);
  rdkafka::add(*l, p.topic, p.partition);
  if (auto err = rd_kafka_resume_partitions(rk.get(), l.get()))
    warn("resume on revoke " + p.topic + '/' + std::to_string(p.partition)
         + ": " + rdkafka::to_string(err));
  p.paused = false;
  n.resumes++;
}

std::shared_ptr<partition_state>
source::state::find(const std::string& topic, int32_t partition) const {
  // Only the polling thread changes `parts`, so it reads without the lock.
  auto i = parts.find({topic, partition});
  return i == parts.end() ? nullptr : i->second;
}

void source::state::warn(const std::string& line) const {
  if (cfg.runtime.log >= log_level::warning) {
    auto text = "keylane kafka: " + line + '\n';
    std::fwrite(text.data(), 1, text.size(), stderr);
  }
}

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

uint64_t source::state::lag_of(const partition_state& p) const {
  auto from = p.tracker.committable();
  if (ends_rk == nullptr || from < 0)
    return 0;
  int64_t low = 0, high = 0;
  // librdkafka's cached ends, from its last fetch: no broker round trip.
  if (rd_kafka_get_watermark_offsets(ends_rk, p.topic.c_str(), p.partition,
                                     &low, &high)
        != RD_KAFKA_RESP_ERR_NO_ERROR
      || high < from)
    return 0;
  return static_cast<uint64_t>(high - from);
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
