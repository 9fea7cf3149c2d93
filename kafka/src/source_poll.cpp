// SPDX-License-Identifier: Apache-2.0
// The source's polling thread: it reads records, offers them to the
// runtime, holds back what does not fit and pauses partitions meanwhile.
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

} // namespace keylane::kafka
