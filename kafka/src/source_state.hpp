// SPDX-License-Identifier: Apache-2.0
#pragma once

// The inside of keylane::kafka::source, shared by its source files.

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "keylane/detail/read_gate.hpp"
#include "keylane/kafka/offset_tracker.hpp"
#include "keylane/kafka/source.hpp"
#include "changelog_store.hpp"
#include "output_writer.hpp"
#include "rdkafka.hpp"

namespace keylane::kafka {

/// One assignment of one partition to this consumer. `tracker` is guarded
/// by `source::state::mu`; the other members belong to the polling thread.
struct partition_state {
  std::string topic;
  int32_t partition = 0;
  /// Distinguishes this assignment from earlier ones of the same partition.
  uint64_t assignment = 0;
  offset_tracker tracker;
  /// Records read but not yet taken by the runtime, in offset order; while
  /// any are held the partition is paused.
  std::deque<record> held;
  bool paused = false;
  bool revoked = false;
  /// One past the last offset read (librdkafka may hand records out again
  /// after a resume; those are skipped).
  int64_t next_read = -1;
  /// The last offset sent in a commit, and the last one the broker took.
  int64_t sent = -1;
  int64_t acked = -1;
  /// With a changelog: its keys are being restored (records are held),
  /// the restorer says it is done, and whether writes for it go out.
  bool restoring = false;
  bool restore_queued = false;
  std::atomic<bool> restored{false};
  bool owned = false;
};

using partition_id = std::pair<std::string, int32_t>;

/// Counters, written by the polling and consumer threads.
struct source_counters {
  std::atomic<uint64_t> consumed{0}, submitted{0}, finished{0},
    finished_late{0}, refused{0}, pauses{0}, resumes{0}, dropped_on_revoke{0},
    commits{0}, commit_failures{0}, assigned{0}, revoked{0},
    revoke_timeouts{0}, produced{0}, delivered{0}, output_failures{0},
    state_durable{0}, state_durable_late{0}, restores{0},
    records_restored{0}, restore_bytes{0}, restore_ms{0},
    restore_failures{0};
};

struct source::state {
  config cfg;
  callback user_output;
  commit_listener on_commit;
  std::unique_ptr<record_runtime> rt;
  /// The output topic's producer, when `kafka.output_topic` is set.
  std::unique_ptr<output_writer> writer;
  /// The consumer; it leaves its group at the end of `run`, and `stop`
  /// destroys it after the polling thread ended.
  rdkafka::client_ptr rk;
  std::thread poller;
  std::atomic<bool> stopping{false};
  bool stopped = false;
  stop_report last_report;
  source_counters n;

  /// Guards `parts` against the consumer thread and every tracker.
  mutable std::mutex mu;
  /// `rk` for `stats` (partition ends), guarded by `mu`: null before the
  /// consumer exists and once `stop` is about to destroy it.
  rd_kafka_t* ends_rk = nullptr;
  /// Closed by `stop` before anything ends: collectables of
  /// keylane/kafka/metrics.hpp read `stats` only while it is open.
  std::shared_ptr<keylane::detail::read_gate> gate
    = std::make_shared<keylane::detail::read_gate>();
  /// Signalled whenever a tracker finishes an offset (revoke waits on it).
  std::condition_variable finished_cv;
  /// Partitions assigned now. Changed only by the polling thread.
  std::map<partition_id, std::shared_ptr<partition_state>> parts;
  uint64_t assignments = 0;
  /// With a changelog, guarded by `mu`: earlier assignments whose revoke
  /// stopped waiting (`revoke_timeout_ms`, or a lost assignment) while
  /// their events still ran. Their lanes keep those keys' state in memory
  /// and write it when the events end: a new assignment of the partition
  /// restores only after they all ended, so that neither runs on nor
  /// overwrites what another member made of the keys meanwhile.
  std::map<partition_id, std::vector<std::shared_ptr<partition_state>>>
    draining;

  /// Whether offsets also wait for keyed state (`state.store` is not
  /// "none"): set before the runtime starts, then read-only.
  bool keeps_state = false;
  /// Keyed state, both guarded by `mu`. An event's output and the
  /// runtime's word that its state is durable come in either order: the
  /// first to come leaves its sequence number here, the second takes it.
  /// Events whose output came first (parked ones excepted): where their
  /// record is.
  std::unordered_map<uint64_t, output_ticket> awaiting_durable;
  /// Events the runtime reported durable before their output came.
  std::unordered_set<uint64_t> durable_first;

  /// With `kafka.changelog_topic`: the store (shared with the runtime),
  /// and the restorer thread with its queue of assigned partitions.
  std::shared_ptr<changelog_store> changelog;
  std::thread restorer;
  std::mutex restore_mu;
  std::condition_variable restore_cv;
  std::deque<std::shared_ptr<partition_state>> restore_queue;
  bool restore_stopping = false;

  // -- consumer thread ---------------------------------------------------------

  /// The runtime's output: the user's callback, then the output record
  /// (if any); the offset finishes now, or when the output is delivered.
  void on_output(record_event& ev);
  /// Writes `ev`'s output record; false when there is none to write.
  bool write_output(outcome status, const std::string& key,
                    const std::optional<std::string>& result,
                    const std::string& error, output_ticket ticket);
  /// Marks an offset finished if its assignment is still ours.
  void finish(const std::string& topic, int32_t partition, int64_t offset,
              uint64_t assignment);
  /// Makes the offset of event `seq` wait for its keyed state too, unless
  /// the runtime said already that it is durable (before `finish`).
  void await_durable(uint64_t seq, const output_ticket& t);
  /// The tracker of a draining assignment, or null; with `mu` held.
  offset_tracker* draining_tracker(const std::string& topic,
                                   int32_t partition, uint64_t assignment);
  /// Forgets draining assignments of the partition that ended; with `mu`.
  void drop_drained(const std::string& topic, int32_t partition);
  /// Whether no earlier assignment of the partition still runs events;
  /// with `mu` held.
  [[nodiscard]] bool drained(const partition_id& id) const;

  // -- state writer thread -------------------------------------------------------

  /// The runtime made the state changes of events `seqs` durable.
  void state_durable(const std::vector<uint64_t>& seqs);

  // -- restorer thread -----------------------------------------------------------

  /// Opens the changelog store and makes the runtime use it (before the
  /// runtime starts).
  [[nodiscard]] caf::error open_changelog();
  void restore_loop();
  /// Queues `p`'s restore; its records wait until it is done.
  void start_restore(const std::shared_ptr<partition_state>& p);
  /// Stops the restorer (before the consumer goes).
  void stop_restorer();

  // -- output writer thread ------------------------------------------------------

  void delivered(const output_ticket& t, rd_kafka_resp_err_t err);

  // -- polling thread ------------------------------------------------------------

  void run();
  void read(const rd_kafka_message_t& m);
  /// Hands `r` to the runtime; false (record untouched) when it is full.
  bool offer(partition_state& p, record& r);
  /// Offers held records again and resumes partitions that emptied; true
  /// while any partition still holds records.
  bool retry_held();
  void pause(partition_state& p, bool on);
  /// Lifts the pause of a partition being revoked (no seek: it is not
  /// read any more).
  void resume_revoked(partition_state& p);
  void assign(rd_kafka_topic_partition_list_t* list);
  void revoke(rd_kafka_topic_partition_list_t* list);
  /// Commits the committable offsets of `ps` that moved since last sent.
  void commit(const std::vector<std::shared_ptr<partition_state>>& ps,
              bool sync);
  void commit_all();
  void committed(rd_kafka_resp_err_t err,
                 rd_kafka_topic_partition_list_t* offsets);
  [[nodiscard]] bool cooperative() const;
  [[nodiscard]] std::shared_ptr<partition_state>
  find(const std::string& topic, int32_t partition) const;
  /// How far `p` trails its partition's end (`source_stats::lag`); with
  /// `mu` held.
  [[nodiscard]] uint64_t lag_of(const partition_state& p) const;

  void warn(const std::string& line) const;
};

} // namespace keylane::kafka
