// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "keylane/detail/runtime_parts.hpp"

// Each actor's share of the runtime's parts: what it (and, for a shard, its
// lanes) uses, and nothing else, so that a reader sees an actor's
// dependencies in its constructor, and a part an actor stops using shows
// here.
namespace keylane::detail {

/// What a shard and its lanes use: they never touch the window credit
/// (`ingress`) or the spill file.
struct shard_parts {
  explicit shard_parts(const runtime_parts& p)
    : cfg(p.cfg), ops(p.ops), keys(p.keys), boxes(p.boxes), out(p.out),
      parks(p.parks), state(p.state), live(p.live), ledger(p.ledger),
      pub(p.pub), log(p.log), msg(p.msg) {}

  const settings& cfg;
  const payload_ops& ops;
  key_table& keys;
  inboxes& boxes;
  output& out;
  park_service& parks;
  state_service& state;
  live_settings& live;
  stop_ledger& ledger;
  counters& pub;
  logger& log;
  messaging& msg;
};

/// What the supervisor uses: no keyed state (it runs no handler) and no
/// spill file.
struct supervisor_parts {
  explicit supervisor_parts(const runtime_parts& p)
    : cfg(p.cfg), ops(p.ops), in(p.in), keys(p.keys), boxes(p.boxes),
      out(p.out), parks(p.parks), live(p.live), ledger(p.ledger), pub(p.pub),
      log(p.log), msg(p.msg) {}

  const settings& cfg;
  const payload_ops& ops;
  ingress& in;
  key_table& keys;
  inboxes& boxes;
  output& out;
  park_service& parks;
  live_settings& live;
  stop_ledger& ledger;
  counters& pub;
  logger& log;
  messaging& msg;
};

/// What the sink uses: it re-sequences and emits, so no key table, inbox,
/// park, state or messaging.
struct sink_parts {
  explicit sink_parts(const runtime_parts& p)
    : cfg(p.cfg), ops(p.ops), in(p.in), out(p.out), live(p.live),
      ledger(p.ledger), pub(p.pub), log(p.log), spill(p.spill) {}

  const settings& cfg;
  const payload_ops& ops;
  ingress& in;
  output& out;
  live_settings& live;
  stop_ledger& ledger;
  counters& pub;
  logger& log;
  spill_file* spill; // `sink.spill_path`, or null
};

} // namespace keylane::detail
