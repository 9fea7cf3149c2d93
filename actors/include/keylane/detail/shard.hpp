#pragma once

#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include <caf/allowed_unsafe_message_type.hpp>
#include <caf/event_based_actor.hpp>
#include <tsl/robin_map.h>

#include "keylane/detail/lane.hpp"
#include "keylane/detail/messages.hpp"
#include "keylane/detail/state_round.hpp"

namespace keylane::detail {


/// One supervisor instruction for a shard: start a lane, hand a lane more
/// events, or retire a lane.
struct shard_op {
  enum class kind : uint8_t { start, events, retire };
  kind what = kind::events;
  uint64_t lane = 0;
  batch_ptr events;                  // kind::events
  std::unique_ptr<lane::args> start; // kind::start
};

/// The supervisor's instructions for one shard from one of its rounds, in
/// the order it gave them: one message however many keys they touch.
struct shard_work {
  std::vector<shard_op> ops;
};

using shard_work_ptr = std::shared_ptr<shard_work>;

/// A shard's news for the supervisor from one round: lanes that ran dry,
/// keys whose lanes retired, and lanes that did not retire when told to
/// (an event sent straight to them came first; they report idle again
/// when they run dry).
struct shard_report {
  std::vector<idle_notice> idle;
  std::vector<keylane::key> retired;
  std::vector<std::pair<keylane::key, uint64_t>> refused;
  [[nodiscard]] bool empty() const noexcept {
    return idle.empty() && retired.empty() && refused.empty();
  }
};

using shard_report_ptr = std::shared_ptr<shard_report>;

/// The actor that hosts lanes: a fixed set of shards (`scheduler.shards`)
/// runs every active key's lane, each lane in the shard the supervisor
/// picked when the key activated. A live lane's events come from the
/// supervisor until the lane holds all that went through it, then straight
/// from `submit` through the shard's inbox (see `backlog::route`), so a
/// busy key costs the supervisor nothing. A shard handles a message (the
/// supervisor's work, its inbox, a completion, a timer) by running the lanes it
/// touches, then sends what they finished to the sink in one batch and its
/// news to the supervisor in one message. Lanes take turns: a lane runs at
/// most `lane_batch` events before the shard moves on to the next lane, so
/// a hot key delays the shard's other keys by one turn, not by its backlog.
/// Handlers run on the shard's thread and must not block it: a blocked
/// handler stalls the other keys of its shard. Parks are grouped: what the
/// lanes park while the shard handles its messages is written to the store
/// in one transaction (one fsync), then sent to the sink with the round's
/// batch; while more messages wait, up to `park_group_max` events and
/// `park_hold` of time, the write waits for them too, and so do the
/// tombstones and the round's report (a lane that retires must not let the
/// supervisor park its key's later events ahead of these). Single-threaded,
/// as every actor; lanes reach it through the functions below.
class shard : public caf::event_based_actor {
public:
  shard(caf::actor_config& cfg, const runtime_parts& parts,
        caf::actor supervisor,
        caf::actor sink, uint32_t index, handler_maker_ptr maker);
  ~shard() override;

  caf::behavior make_behavior() override;
  void on_exit() override;

  const char* name() const override { return "keylane.shard"; }

  /// A lane's finished events, for the sink (after its backlog release).
  void emit(std::vector<event_ptr>& evs);
  /// A lane ran dry.
  void idle(idle_notice n);
  /// This shard's number (what `backlog::route` names).
  [[nodiscard]] uint32_t index() const noexcept { return index_; }
  /// A lane parked its key.
  void parked(const keylane::key& k);
  /// Takes events a lane parks (its key's, in order); they go to the store
  /// with the other parks of the round in one transaction (see end_round).
  void park(std::vector<event_ptr>& evs);
  /// A lane spent its turn with events left: run it again later.
  void want_turn(uint64_t lane);
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
  [[nodiscard]] state_round& state_out() noexcept { return state_out_; }
  void stage_state(state_round r);
  /// Tells the sink where event `seq` is (stall log).
  void located(uint64_t seq, const keylane::key& k, std::string where,
               int64_t submitted_ns);

private:
  void apply(shard_work& w);
  void take_inbox();
  void end_round();
  void take_turns();
  lane* find(uint64_t id);
  [[nodiscard]] bool hold_parks();
  void write_parks();

  runtime_parts parts_; // its lanes use them too
  uint32_t index_;
  caf::actor supervisor_;
  caf::actor sink_;
  // Lanes hold a plain pointer to it: one shared count per shard, not an
  // atomic increment and decrement per key activation across threads.
  handler_maker_ptr maker_;
  // Open addressing: no node per activation; lanes stay put on the heap.
  tsl::robin_map<uint64_t, std::unique_ptr<lane>> lanes_;
  batch_ptr out_;
  shard_report_ptr report_;
  std::vector<uint64_t> turns_;
  std::vector<event_base*> inbox_buf_;
  uint64_t taken_ = 0;    // events that reached this shard's lanes
  uint64_t finished_ = 0; // of them, those that left for the sink
  std::vector<lane*> touched_; // lanes the inbox gave events this round
  bool turn_pending_ = false;
  // Giving memory back once idle: a trim_atom is on its way, carrying
  // `starts_` (lanes started so far) to tell whether the shard stayed idle.
  bool trim_armed_ = false;
  bool trimmed_ = false; // and no lane started since
  uint64_t starts_ = 0;
  // Parks not yet written, in the order the lanes gave them, and since when
  // the oldest of them waits.
  std::vector<event_ptr> to_park_;
  clock::time_point parks_since_;
  bool park_wakeup_armed_ = false;
  // Keyed state: lanes with unwritten changes, and the round's writes.
  std::vector<uint64_t> state_dirty_;
  bool checkpoint_armed_ = false;
  state_round state_out_;
};

} // namespace keylane::detail

CAF_ALLOW_UNSAFE_MESSAGE_TYPE(keylane::detail::shard_work_ptr)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(keylane::detail::shard_report_ptr)
