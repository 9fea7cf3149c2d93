// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <utility>
#include <vector>

#include <caf/allowed_unsafe_message_type.hpp>
#include <caf/event_based_actor.hpp>
#include <tsl/robin_map.h>

#include "keylane/detail/coarse_clock.hpp"
#include "keylane/detail/inbox_item.hpp"
#include "keylane/detail/key_table.hpp"
#include "keylane/detail/lane.hpp"
#include "keylane/detail/live_settings.hpp"
#include "keylane/detail/messages.hpp"
#include "keylane/detail/output.hpp"
#include "keylane/detail/state_round.hpp"

namespace keylane::detail {


/// A shard's news for the supervisor from one round: parked keys whose
/// lane retired (their events go to the supervisor from now on, and the
/// operator calls that waited for the lane run).
struct shard_report {
  std::vector<keylane::key> parked;
  [[nodiscard]] bool empty() const noexcept { return parked.empty(); }
};

using shard_report_ptr = std::shared_ptr<shard_report>;

/// The actor that hosts lanes: a fixed set of shards (`scheduler.shards`)
/// runs every active key's lane, each lane in the shard `submit` picked
/// when the key activated. Its inbox brings the events of its lanes, the
/// first event of a lane starting it (the key table picked the shard). A shard handles a message (its
/// inbox, a completion, a timer) by running the lanes it touches, then
/// sends what they finished to the sink in one batch, then retires the
/// lanes that are due: dry ones after `lane_linger_ms`, parking ones and
/// all when the linger is 0 at once, and the longest idle ones at once
/// while keys wait for a slot of the cap (or lanes exceed a lowered cap).
/// Lanes take turns: a lane runs at most `lane_batch` events before the
/// shard moves on to the next lane, so a hot key delays the shard's other
/// keys by one turn, not by its backlog. Handlers run on the shard's
/// thread and must not block it: a blocked handler stalls the other keys
/// of its shard. Parks are grouped: what the lanes park while the shard
/// handles its messages is written to the store in one transaction (one
/// fsync), then sent to the sink with the round's batch; while more
/// messages wait, up to `park_group_max` events and `park_hold` of time,
/// the write waits for them too, and so do retires (a parking lane retires
/// only once its parks are written). Single-threaded, as every actor;
/// lanes reach it through the functions below.
class shard : public caf::event_based_actor {
public:
  /// Learns the supervisor from its first message (`supervisor_atom`).
  shard(caf::actor_config& cfg, const shard_parts& parts, caf::actor sink,
        uint32_t index, handler_maker_ptr maker);
  ~shard() override;

  caf::behavior make_behavior() override;
  void on_exit() override;

  const char* name() const override { return "keylane.shard"; }

  /// A lane's finished event, for the output at the end of the round (its
  /// lane gives its backlog count back before then, in `flush`).
  void finished(event_ptr ev);
  /// Lane `l` ran dry: it retires when due (see the class comment).
  /// Returns the round's time, the lane's `dry_since`.
  [[nodiscard]] clock::time_point idle(lane& l);
  /// The coarse clock (coarse_now), read once per round: for times a
  /// stall log or a linger of milliseconds reads, one clock call per round
  /// rather than per event.
  [[nodiscard]] clock::time_point round_time() noexcept {
    if (!round_time_valid_) {
      round_time_ = coarse_now();
      round_time_valid_ = true;
    }
    return round_time_;
  }
  /// The settings in force, refreshed once per reload (lanes borrow them:
  /// valid until the next reload, see lane::policy).
  [[nodiscard]] const settings& settings_now() {
    // Inline: lanes ask once per event.
    auto gen = parts_.live.generation();
    if (gen != settings_gen_ || !settings_)
      refresh_settings(gen);
    return *settings_;
  }
  /// What its lanes share with it (the key table, outputs, stores).
  [[nodiscard]] const shard_parts& parts() const noexcept { return parts_; }
  /// This shard's number (what a key's route names).
  [[nodiscard]] uint32_t index() const noexcept { return index_; }
  /// A lane parked its key (the key table keeps it parked).
  void parked(const keylane::key& k);
  /// Takes events a lane parks (its key's, in order); they go to the store
  /// with the other parks of the round in one transaction (see end_round).
  void park(std::vector<event_ptr>& evs);
  /// A lane spent its turn with events left: run it again later.
  void want_turn(uint64_t lane);
  /// Attempt `token` of lane `lane` times out at `at` unless it ended by
  /// then (`now`: the caller's reading of the clock).
  void arm_timeout(uint64_t lane, uint64_t token, clock::time_point at,
                   clock::time_point now);
  /// Lane `lane` retries its head at `at` (attempt `token`'s backoff ends).
  void arm_retry(uint64_t lane, uint64_t token, clock::time_point at,
                 clock::time_point now);
  /// The newest CAF request number of this actor (see lane::requests_).
  [[nodiscard]] uint64_t request_mark() const noexcept;
  /// Drops the response handlers of requests in `ranges`.
  void drop_responses(const std::vector<std::pair<uint64_t, uint64_t>>& ranges);
  /// Removes the ranges whose requests were all answered.
  void keep_unanswered(std::vector<std::pair<uint64_t, uint64_t>>& ranges);
  /// A lane's state changed since its last write: checkpoint it.
  void state_dirty(uint64_t lane);
  /// State writes (and durable events) of this round, staged when it ends,
  /// before the round's report (a retired key's next lane loads them).
  [[nodiscard]] state_round& state_out() noexcept { return state_.out; }
  void stage_state(state_round r);
  /// Takes the events `seqs` of this round out of its output: their state
  /// could not be written before a stop, so `stop` lists them instead.
  void withhold(const std::vector<uint64_t>& seqs);
  /// Tells the sink where event `seq` is (stall log).
  void located(uint64_t seq, const keylane::key& k, std::string where,
               int64_t submitted_ns);

private:
  void refresh_settings(uint64_t gen);
  void take_inbox();
  lane* start_lane(uint64_t id, const keylane::key& k);
  void adopt(const inbox_item& item);
  void shed();
  void end_round();
  void retire_due(bool sweep);
  [[nodiscard]] bool retire(lane& l, key_table::retire_round& round);
  void arm_linger();
  void take_turns();
  lane* find(uint64_t id);
  [[nodiscard]] bool hold_parks();
  void write_parks();
  // Puts a finished event in the round's output (and its note, see notes_).
  void stage(event_ptr ev);
  void send_measures();
  void sweep_timeouts();
  void arm_timer(clock::time_point at, clock::time_point now);

  shard_parts parts_; // its lanes use them too
  uint32_t index_;
  caf::actor supervisor_;
  caf::actor sink_;
  // Lanes hold a plain pointer to it: one shared count per shard, not an
  // atomic increment and decrement per key activation across threads.
  handler_maker_ptr maker_;
  // Open addressing: no node per activation; lanes stay put on the heap.
  // Ids carry their stripe in the low bits (backlog::name_lane), which an
  // identity hash would index by: mixed, they spread.
  struct lane_id_hash {
    size_t operator()(uint64_t id) const noexcept {
      return static_cast<size_t>(stable_hash(id));
    }
  };
  tsl::robin_map<uint64_t, std::unique_ptr<lane>, lane_id_hash> lanes_;
  batch_ptr out_;
  // Without the sink (`per_key`, `none`): what counting reads of each of
  // `out_`'s events, in its order, noted as it finished (see outcome_note).
  std::vector<outcome_note> notes_;
  shard_report_ptr report_;
  std::vector<uint64_t> turns_;
  std::vector<inbox_item> inbox_buf_;
  uint64_t taken_ = 0;    // events that reached this shard's lanes
  uint64_t finished_ = 0; // of them, those that left for the sink
  // The last take found a full batch: at least that many more wait in
  // the inbox, which counts in the load as well.
  uint64_t behind_ = 0;
  // What placement and `shed` weigh: the events this shard holds and has
  // not finished, and the inbox behind them as far as it is known.
  [[nodiscard]] uint64_t load() const noexcept {
    return taken_ - finished_ + behind_;
  }
  std::vector<lane*> touched_; // lanes the inbox gave events this round
  // Lanes that ran dry, least recently listed first, one entry per lane
  // (`lane::listed`): a resident key runs dry after almost every round,
  // and an entry per time it did cost a lookup each, and memory, to drop
  // again. An entry is checked when it reaches the front (`retire_due`).
  // And those to retire this round regardless.
  struct idle_lane {
    uint64_t id;
    clock::time_point since;
  };
  struct idle_lanes {
    std::deque<idle_lane> lanes;
    std::vector<idle_lane> retire_now;
    std::chrono::milliseconds linger;
    bool linger_armed = false;
    bool sweep_due = false; // the linger timer fired: retire who is past it
  } idle_;
  // Moving dry lanes to a less busy shard: while this one holds far more
  // unfinished events than the least busy other (`shed`), the lanes that
  // ran dry in a round go there at its end. A resident lane otherwise stays
  // where it started, beside a hot key if that is where it started.
  struct shed_state {
    bool on = false;
    uint32_t to = 0;
    std::vector<idle_lane> dry; // ran dry this round
    uint64_t moved = 0;         // not yet counted in `pub`
  } shed_;
  clock::time_point round_time_;
  bool round_time_valid_ = false; // until the round ends (end_round)
  bool turn_pending_ = false;
  // Giving memory back once idle: a trim_atom is on its way, carrying
  // `starts` (lanes started so far) to tell whether the shard stayed idle.
  struct trim_state {
    bool armed = false;
    bool done = false; // and no lane started since
    uint64_t starts = 0;
  } trim_;
  uint64_t spawned_ = 0; // lane starts not yet counted in `pub`
  settings_ptr settings_;
  uint64_t settings_gen_ = 0;
  // Parks not yet written, in the order the lanes gave them, and since when
  // the oldest of them waits.
  struct park_group {
    std::vector<event_ptr> events;
    clock::time_point since;
    bool wakeup_armed = false;
  } parks_;
  // Attempt deadlines and retry backoffs, earliest first (a min-heap): one
  // CAF timer for the earliest, where a timer per attempt cost CAF's clock
  // thread a message for every asynchronous event. Entries of attempts
  // that ended are dropped when their time comes (the lane checks the
  // token).
  struct deadline {
    clock::time_point at;
    uint64_t lane, token;
    bool retry; // the backoff of a failed attempt ends, else it times out
    bool operator>(const deadline& x) const noexcept { return at > x.at; }
  };
  struct deadline_timer {
    std::vector<deadline> heap;
    bool armed = false;
    clock::time_point armed_at;
    uint64_t generation = 0; // of the timer in force
  } timers_;
  void arm_deadline(deadline d, clock::time_point now);
  // Keyed state: lanes with unwritten changes, and the round's writes.
  struct state_writes {
    std::vector<uint64_t> dirty;
    bool checkpoint_armed = false;
    state_round out;
  } state_;
};

// Here, where `shard` is complete: lanes read their parts once per event.
inline const shard_parts& lane::parts() const noexcept {
  return host_->parts();
}

} // namespace keylane::detail

CAF_ALLOW_UNSAFE_MESSAGE_TYPE(keylane::detail::shard_report_ptr)
