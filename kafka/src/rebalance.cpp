// SPDX-License-Identifier: Apache-2.0
// Partition assignment, revocation and offset commits of a source; all on
// its polling thread (librdkafka calls these callbacks from inside poll).

#include <chrono>
#include <cstring>

#include "source_state.hpp"

namespace keylane::kafka {

bool source::state::cooperative() const {
  return std::strcmp(rd_kafka_rebalance_protocol(rk.get()), "COOPERATIVE")
         == 0;
}

void source::state::assign(rd_kafka_topic_partition_list_t* list) {
  for (int i = 0; i < list->cnt; ++i) {
    const auto& tp = list->elems[i];
    auto p = std::make_shared<partition_state>();
    p->topic = tp.topic;
    p->partition = tp.partition;
    p->assignment = ++assignments;
    // Its keys' state first: none of its events runs before that. The
    // restore starts once no earlier assignment's events run (`draining`).
    if (changelog)
      p->restoring = true;
    std::lock_guard<std::mutex> guard{mu};
    parts[{p->topic, p->partition}] = std::move(p);
    n.assigned++;
  }
  if (cooperative()) {
    if (rdkafka::error_ptr e{rd_kafka_incremental_assign(rk.get(), list)})
      warn("assign: " + rdkafka::to_string(e));
  } else if (auto err = rd_kafka_assign(rk.get(), list)) {
    warn("assign: " + rdkafka::to_string(err));
  }
  // No pause or resume here: either bumps the partition's op version,
  // and one that lands after librdkafka queued the assignment's fetch
  // start makes it drop that start as outdated, so the partition never
  // fetched (seen under load: "received outdated op FETCH_START"). A
  // partition paused when it was revoked was resumed by `revoke`.
}

void source::state::revoke(rd_kafka_topic_partition_list_t* list) {
  std::vector<std::shared_ptr<partition_state>> gone;
  for (int i = 0; i < list->cnt; ++i) {
    auto p = find(list->elems[i].topic, list->elems[i].partition);
    if (!p)
      continue;
    // Stop taking its records: held ones were never started, so they are
    // simply not committed and go to the next owner.
    p->revoked = true;
    n.dropped_on_revoke += p->held.size();
    p->held.clear();
    gone.push_back(std::move(p));
    n.revoked++;
  }
  // A lost assignment belongs to another member already: its commits
  // would be refused, and waiting only delays rejoining.
  bool lost = rd_kafka_assignment_lost(rk.get());
  if (!lost && !gone.empty()) {
    auto deadline = std::chrono::steady_clock::now()
                    + std::chrono::milliseconds(cfg.source.revoke_timeout_ms);
    std::unique_lock<std::mutex> guard{mu};
    auto all_done = [&gone] {
      for (auto& p : gone)
        if (p->tracker.unfinished() > 0)
          return false;
      return true;
    };
    if (!finished_cv.wait_until(guard, deadline, all_done))
      n.revoke_timeouts++;
    guard.unlock();
    commit(gone, true);
  }
  {
    // From here on their late completions find no partition and count as
    // finished_late: the next owner runs those records again.
    std::lock_guard<std::mutex> guard{mu};
    for (auto& p : gone) {
      auto i = parts.find({p->topic, p->partition});
      if (i != parts.end() && i->second == p)
        parts.erase(i);
      if (changelog && p->tracker.unfinished() > 0) {
        warn(std::to_string(p->tracker.unfinished()) + " events of "
             + p->topic + '/' + std::to_string(p->partition)
             + " still run after its revoke: if it comes back, its restore "
               "waits for them");
        draining[{p->topic, p->partition}].push_back(p);
      }
    }
  }
  // After the commit: later state writes of its keys belong to events the
  // next owner runs again, and are not sent.
  for (auto& p : gone)
    if (p->owned) {
      changelog->own(p->partition, false);
      p->owned = false;
    }
  // librdkafka keeps a partition's pause across a revoke and a new
  // assignment: one paused now would come back paused, with a fresh state
  // that thinks it is not, and never fetch again. Resumed while still
  // assigned, before the unassign stops its fetch.
  for (auto& p : gone)
    if (p->paused)
      resume_revoked(*p);
  if (cooperative()) {
    if (rdkafka::error_ptr e{rd_kafka_incremental_unassign(rk.get(), list)})
      warn("unassign: " + rdkafka::to_string(e));
  } else {
    rd_kafka_assign(rk.get(), nullptr);
  }
}

void source::state::commit_all() {
  std::vector<std::shared_ptr<partition_state>> ps;
  for (auto& [id, p] : parts)
    if (!p->revoked)
      ps.push_back(p);
  commit(ps, false);
}

void source::state::commit(
  const std::vector<std::shared_ptr<partition_state>>& ps, bool sync) {
  auto l = rdkafka::new_list(static_cast<int>(ps.size()));
  for (auto& p : ps) {
    int64_t at;
    {
      std::lock_guard<std::mutex> guard{mu};
      at = p->tracker.committable();
    }
    if (at < 0 || at <= p->sent)
      continue;
    rdkafka::add(*l, p->topic, p->partition).offset = at;
    p->sent = at;
  }
  if (l->cnt > 0) {
    auto err = rd_kafka_commit(rk.get(), l.get(), sync ? 0 : 1);
    // The outcome of each commit, sync or not, arrives in `committed`.
    if (err && sync)
      warn("commit on revoke: " + rdkafka::to_string(err)
           + " (those records will be redelivered)");
  }
}

void source::state::committed(rd_kafka_resp_err_t err,
                              rd_kafka_topic_partition_list_t* offsets) {
  if (err == RD_KAFKA_RESP_ERR__NO_OFFSET)
    return; // nothing to commit
  for (int i = 0; offsets && i < offsets->cnt; ++i) {
    const auto& tp = offsets->elems[i];
    auto p = find(tp.topic, tp.partition);
    if (err || tp.err) {
      n.commit_failures++;
      // Sent again at the next interval.
      if (p && p->sent == tp.offset)
        p->sent = p->acked;
      continue;
    }
    n.commits++;
    if (p && tp.offset > p->acked)
      p->acked = tp.offset;
    if (on_commit)
      on_commit(tp.topic, tp.partition, tp.offset);
  }
}

} // namespace keylane::kafka
