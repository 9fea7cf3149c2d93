// SPDX-License-Identifier: Apache-2.0
// The output side of a source: the runtime's output callback, the output
// topic's records and their delivery reports, and finishing offsets.

#include <algorithm>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "source_state.hpp"

namespace keylane::kafka {

// -- consumer thread ------------------------------------------------------------

void source::state::on_output(record_event& ev) {
  // The callback may move the payload away: keep what finishes it.
  output_ticket t{ev.payload.topic, ev.payload.partition, ev.payload.offset,
                  ev.payload.assignment, true};
  // An event parked in memory is not done: it would be lost with the
  // process, so its offset holds the commit until a replay finishes it.
  t.finishes = !(ev.status == outcome::parked
                 && cfg.runtime.park != park_mode::sqlite);
  // With keyed state it also waits until its state is durable. A parked
  // event is never reported durable: for it the output alone decides.
  if (keeps_state && ev.status != outcome::parked)
    await_durable(ev.seq, t);
  if (!t.finishes) {
    // Parked: its lane is gone, so for a draining assignment it ended.
    std::lock_guard<std::mutex> guard{mu};
    if (auto* tr = draining_tracker(t.topic, t.partition, t.assignment)) {
      tr->finish(t.offset);
      drop_drained(t.topic, t.partition);
    }
  }
  if (!writer) {
    if (user_output)
      user_output(ev);
    if (t.finishes)
      finish(t.topic, t.partition, t.offset, t.assignment);
    return;
  }
  // The output record is written after the callback returned, so its
  // delivery (which finishes the offset) comes after the callback too;
  // from copies, since the callback may move key and result away.
  auto status = ev.status;
  auto key = ev.payload.key;
  auto result = ev.result;
  auto error = ev.error;
  if (user_output)
    user_output(ev);
  if (!write_output(status, key, result, error, t) && t.finishes)
    finish(t.topic, t.partition, t.offset, t.assignment);
}

bool source::state::write_output(outcome status, const std::string& key,
                                 const std::optional<std::string>& result,
                                 const std::string& error,
                                 output_ticket ticket) {
  if (status != outcome::ok
      && cfg.source.tombstones == tombstone_output::skip)
    return false;
  std::vector<output_writer::header> hdrs{
    {"keylane.outcome", to_string(status)},
    {"keylane.source", ticket.topic + '/' + std::to_string(ticket.partition)
                         + '/' + std::to_string(ticket.offset)}};
  if (status != outcome::ok && !error.empty())
    hdrs.emplace_back("keylane.error", error);
  std::string_view value;
  if (status == outcome::ok && result)
    value = *result;
  auto err = writer->write(key, value, hdrs, std::move(ticket));
  if (err) {
    // Not queued: the offset stays unfinished, so its partition commits
    // no further and the record is redelivered after a restart.
    n.output_failures++;
    warn("output to " + cfg.source.output_topic + ": "
         + rdkafka::to_string(err) + " (its input offset is not committed)");
    return true;
  }
  n.produced++;
  return true;
}

void source::state::finish(const std::string& topic, int32_t partition,
                           int64_t offset, uint64_t assignment) {
  std::lock_guard<std::mutex> guard{mu};
  auto i = parts.find({topic, partition});
  if (i == parts.end() || i->second->assignment != assignment) {
    n.finished_late++;
    if (auto* tr = draining_tracker(topic, partition, assignment)) {
      tr->finish(offset);
      drop_drained(topic, partition);
    }
    return;
  }
  if (i->second->tracker.finish(offset)) {
    n.finished++;
    finished_cv.notify_all();
  }
}

void source::state::await_durable(uint64_t seq, const output_ticket& t) {
  std::lock_guard<std::mutex> guard{mu};
  if (durable_first.erase(seq) > 0)
    return; // durable already: the output alone is left
  awaiting_durable.emplace(seq, t);
  auto i = parts.find({t.topic, t.partition});
  if (i != parts.end() && i->second->assignment == t.assignment)
    i->second->tracker.await_state(t.offset);
  else if (auto* tr = draining_tracker(t.topic, t.partition, t.assignment))
    tr->await_state(t.offset);
}

offset_tracker* source::state::draining_tracker(const std::string& topic,
                                                int32_t partition,
                                                uint64_t assignment) {
  auto i = draining.find({topic, partition});
  if (i == draining.end())
    return nullptr;
  for (auto& p : i->second)
    if (p->assignment == assignment)
      return &p->tracker;
  return nullptr;
}

void source::state::drop_drained(const std::string& topic,
                                 int32_t partition) {
  auto i = draining.find({topic, partition});
  if (i == draining.end())
    return;
  auto& v = i->second;
  v.erase(std::remove_if(v.begin(), v.end(),
                         [](const std::shared_ptr<partition_state>& p) {
                           return p->tracker.unfinished() == 0;
                         }),
          v.end());
  if (v.empty())
    draining.erase(i);
}

bool source::state::drained(const partition_id& id) const {
  return draining.count(id) == 0;
}

// -- state writer thread ----------------------------------------------------------

void source::state::state_durable(const std::vector<uint64_t>& seqs) {
  std::lock_guard<std::mutex> guard{mu};
  bool any = false;
  for (auto seq : seqs) {
    auto w = awaiting_durable.find(seq);
    if (w == awaiting_durable.end()) {
      // Before its output (which may not even have been handed to the
      // callback yet): the output finds it here.
      durable_first.insert(seq);
      continue;
    }
    const auto& t = w->second;
    auto i = parts.find({t.topic, t.partition});
    if (i == parts.end() || i->second->assignment != t.assignment) {
      // Given up meanwhile: the next owner runs the record again, and
      // the state it finds skips it (its change is durable now).
      n.state_durable_late++;
      if (auto* tr = draining_tracker(t.topic, t.partition, t.assignment)) {
        tr->state_durable(t.offset);
        drop_drained(t.topic, t.partition);
      }
    } else {
      n.state_durable++;
      if (i->second->tracker.state_durable(t.offset)) {
        n.finished++;
        any = true;
      }
    }
    awaiting_durable.erase(w);
  }
  if (any)
    finished_cv.notify_all();
}

// -- output writer thread ---------------------------------------------------------

void source::state::delivered(const output_ticket& t,
                              rd_kafka_resp_err_t err) {
  if (err) {
    // librdkafka retried until message.timeout.ms: the offset stays
    // unfinished (as above), and the input record runs again elsewhere.
    n.output_failures++;
    warn("output of " + t.topic + '/' + std::to_string(t.partition) + '/'
         + std::to_string(t.offset) + " to " + cfg.source.output_topic
         + ": " + rdkafka::to_string(err)
         + " (its input offset is not committed)");
    return;
  }
  n.delivered++;
  if (t.finishes)
    finish(t.topic, t.partition, t.offset, t.assignment);
}

} // namespace keylane::kafka
