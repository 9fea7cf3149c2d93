// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <vector>

#include <caf/actor.hpp>
#include <caf/actor_system.hpp>

#include "keylane/config.hpp"
#include "keylane/handler_registry.hpp"
#include "keylane/key.hpp"

namespace keylane::detail {

struct counters;
class inboxes;
class ingress;
class key_table;
class live_settings;
class logger;
class messaging;
class output;
class park_service;
class spill_file;
class state_service;
class stop_ledger;
struct payload_ops;

/// The parts of a runtime that its actors use. The engine owns them and
/// outlives the actors; each actor keeps only the parts it needs.
struct runtime_parts {
  const settings& cfg;
  const payload_ops& ops;
  ingress& in;      // window credit, sequence numbers
  key_table& keys;  // a key's route, count, wait and park; the cap
  inboxes& boxes;   // the hand-off to the shards and the supervisor
  output& out;
  park_service& parks;
  state_service& state;
  live_settings& live;
  stop_ledger& ledger;
  counters& pub;
  logger& log;
  messaging& msg;
  spill_file* spill; // `sink.spill_path`, or null
};

/// The actors a runtime starts.
struct runtime_actors {
  caf::actor supervisor;
  caf::actor sink;
};

/// Spawns the sink, the shards and the supervisor in `sys`;
/// `parked` are the keys the park store holds from an earlier run. Defined
/// with the actors (actors/src/spawn_actors.cpp): the runtime names no
/// actor type.
runtime_actors spawn_actors(caf::actor_system& sys, const runtime_parts& p,
                            handler_factory make, handler_params params,
                            std::vector<key> parked);

} // namespace keylane::detail
