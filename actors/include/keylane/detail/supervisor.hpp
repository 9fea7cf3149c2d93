// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <unordered_set>
#include <utility>
#include <vector>

#include <caf/event_based_actor.hpp>
#include <tsl/robin_map.h>

#include "keylane/config.hpp"
#include "keylane/detail/messages.hpp"
#include "keylane/detail/shard.hpp"
#include "keylane/handler_registry.hpp"
#include "keylane/key.hpp"

namespace keylane::detail {


/// Owns what only one place can decide: parking the events of a parked
/// key once its lane is gone, replay, discard and reload. A live key's
/// events, the start and retire of its lane, and the keys waiting for a
/// slot of the cap never pass through it (see `key_table`, which also
/// keeps whether a key is parked). A parked key whose lane is gone is held
/// for it: its events come here and are parked behind, so the store gets
/// them in order from one writer at a time. Operator calls (replay,
/// discard) on a parked key wait until its lane is gone. Single-threaded,
/// as every actor.
class supervisor : public caf::event_based_actor {
public:
  supervisor(caf::actor_config& cfg, const supervisor_parts& parts,
             caf::actor sink,
             std::vector<caf::actor> shards, std::vector<key> parked);

  caf::behavior make_behavior() override;
  void on_exit() override;

  const char* name() const override { return "keylane.supervisor"; }

private:
  void drain();
  void route(event_ptr ev);
  void on_report(shard_report& r);
  void publish();
  void write_parked();
  void deliver_parked();
  void operate(bool replay, const key& k, op_reply reply);
  caf::expected<uint64_t> replay_now(const key& k);
  caf::expected<uint64_t> discard_now(const key& k);
  void route_ingress_of(const key& k);
  void reconfigure(settings_ptr live);
  void locate(uint64_t seq);
  void on_trim(uint64_t spawned);

  supervisor_parts parts_;
  caf::actor sink_;
  settings_ptr live_;
  size_t ingress_batch_;

  std::vector<event_base*> buf_;
  // Operator calls on parked keys whose lane is still alive (true: replay).
  tsl::robin_map<key, std::vector<std::pair<bool, op_reply>>, key_hasher>
    deferred_;
  std::vector<event_ptr> to_park_; // of parked keys without a lane
  size_t written_ = 0;             // how many of `to_park_` are stored
  uint64_t replayed_ = 0;
  std::vector<caf::actor> shards_;
  // Giving memory back once idle: a trim_atom is on its way, carrying the
  // lanes started so far, to tell whether it stayed idle meanwhile.
  bool trim_armed_ = false;
  bool trimmed_ = false;
};

} // namespace keylane::detail
