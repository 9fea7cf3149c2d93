#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <unordered_set>
#include <utility>
#include <vector>

#include <caf/event_based_actor.hpp>
#include <tsl/robin_map.h>

#include "keylane/config.hpp"
#include "keylane/detail/handler_maker.hpp"
#include "keylane/detail/messages.hpp"
#include "keylane/detail/shard.hpp"
#include "keylane/detail/waiting_keys.hpp"
#include "keylane/handler_registry.hpp"
#include "keylane/key.hpp"

namespace keylane::detail {


/// Routes events from ingress to lanes. Owns the key -> lane map, the cap
/// on live lanes and the FIFO of keys waiting for a slot. A key is in one
/// of three states: running (a lane is alive and takes its events),
/// retiring (its lane runs `on_retire`; new events wait here) or waiting
/// (no slot yet; its events wait here in order; keys get slots oldest
/// event first). A key may also be parked:
/// while its lane lives, the lane parks what it is sent; once the lane is
/// gone, the supervisor parks the key's events itself, so the store gets
/// them in order from one writer at a time. Operator calls (replay,
/// discard) on a parked key wait until its lane is gone. A lane that ran
/// dry lingers, still bound to its key, for `lane_linger_ms` while no key
/// waits for a slot; the least recently idle lingering lane retires as soon
/// as a key needs its slot. Single-threaded,
/// as every actor.
class supervisor : public caf::event_based_actor {
public:
  supervisor(caf::actor_config& cfg, const runtime_parts& parts,
             caf::actor sink,
             handler_factory make, handler_params params,
             std::vector<key> parked);

  caf::behavior make_behavior() override;
  void on_exit() override;

  const char* name() const override { return "keylane.supervisor"; }

private:
  enum class state : uint8_t { running, retiring, waiting };

  struct entry {
    key k;                  // its key (the table's copy moves on rehash)
    uint64_t lane = 0;      // id of the current lane, 0 if none
    uint64_t forwarded = 0; // events sent to the current lane
    uint32_t shard = 0;     // where the current lane lives
    state st = state::waiting;
    bool touched = false;   // pending must go out at the end of this drain
    bool lingering = false; // its lane ran dry and waits for more
    uint64_t linger_gen = 0;
    std::chrono::steady_clock::time_point idle_since;
    batch_ptr pending;      // events not yet sent to a lane
    // Operator calls waiting for the lane to go (true: replay).
    std::vector<std::pair<bool, op_reply>> ops;
  };

  void drain();
  void route(event_ptr ev);
  void flush_touched();
  void start_lane(const key& k, entry& e);
  void on_idle(const key& k, uint64_t lane, uint64_t finished);
  void on_retired(const key& k);
  void on_refused(const key& k, uint64_t lane);
  void on_report(shard_report& r);
  shard_op& op_for(uint32_t shard, shard_op::kind what, uint64_t lane);
  void post();
  void admit();
  void publish();
  void retire_lane(entry& e);
  void reclaim();
  void on_linger_timer();
  void arm_linger_timer();
  void write_parked();
  void deliver_parked();
  void operate(bool replay, const key& k, op_reply reply);
  caf::expected<uint64_t> replay_now(const key& k);
  caf::expected<uint64_t> discard_now(const key& k);
  void route_ingress_of(const key& k);
  void reconfigure(settings_ptr live);
  void locate(uint64_t seq);
  void on_trim(uint64_t spawned);

  runtime_parts parts_; // its shards take them too
  caf::actor sink_;
  handler_maker_ptr maker_;
  settings_ptr live_; // what new lanes start with
  size_t cap_;
  size_t ingress_batch_;

  // Open addressing (hash stored): most lookups of a node-based map missed
  // the cache; entries stay put on the heap, so `touched_` may point at
  // them while a drain inserts keys.
  tsl::robin_map<key, std::unique_ptr<entry>, key_hasher, std::equal_to<key>,
                 std::allocator<std::pair<key, std::unique_ptr<entry>>>, true>
    keys_;
  waiting_keys waiting_;
  std::vector<entry*> touched_;
  std::vector<event_base*> buf_;
  std::unordered_set<key, key_hasher> parked_;
  std::vector<event_ptr> to_park_; // of parked keys without a lane
  size_t written_ = 0;             // how many of `to_park_` are stored
  uint64_t replayed_ = 0;
  std::vector<caf::actor> shards_;
  std::vector<size_t> shard_lanes_;    // live lanes per shard
  std::vector<shard_work_ptr> outbox_; // per shard, sent by `post`
  // Lingering lanes, least recently idle first; an item is stale unless its
  // key's entry still lingers with the same generation.
  std::deque<std::pair<key, uint64_t>> lingering_;
  uint64_t linger_gen_ = 0;
  std::chrono::milliseconds linger_;
  bool linger_timer_ = false;
  size_t retiring_ = 0; // lanes told to retire that have not reported
  size_t active_ = 0;
  uint64_t peak_ = 0;
  uint64_t spawned_ = 0;
  uint64_t retired_ = 0;
  // Giving memory back once idle: a trim_atom is on its way, carrying
  // `spawned_` to tell whether the supervisor stayed idle meanwhile.
  bool trim_armed_ = false;
  bool trimmed_ = false; // and no lane started since
};

} // namespace keylane::detail
