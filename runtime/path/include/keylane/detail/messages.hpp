// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstdint>
#include <future>
#include <memory>
#include <vector>

#include <caf/expected.hpp>

#include <caf/allowed_unsafe_message_type.hpp>
#include <caf/atom.hpp>

#include "keylane/config.hpp"
#include "keylane/detail/event_base.hpp"
#include "keylane/detail/result_box.hpp"
#include "keylane/key.hpp"

namespace keylane::detail {

class stop_ledger;

/// A run of events moving between actors in one message. If a batch dies
/// with events still inside (its receiver was stopped), it reports them to
/// the stop ledger, so `stop()` can account for every event.
struct event_batch {
  event_batch(stop_ledger* ledger, const char* stage)
    : ledger(ledger), stage(stage) {}
  event_batch(const event_batch&) = delete;
  event_batch& operator=(const event_batch&) = delete;
  ~event_batch();

  stop_ledger* ledger;
  const char* stage;
  std::vector<event_ptr> items;
};

using batch_ptr = std::shared_ptr<event_batch>;

/// Where the supervisor answers an operator's replay or discard. If the
/// supervisor ends first, the promise breaks and the caller sees `stopped`.
using op_reply = std::shared_ptr<std::promise<caf::expected<uint64_t>>>;

// Supervisor: events of parked keys wait in its queue (inboxes).
using drain_atom = caf::atom_constant<caf::atom("kl_drain")>;
// Producer -> shard: events wait in the shard's inbox (sent straight to
// its lanes by the key table).
using inbox_atom = caf::atom_constant<caf::atom("kl_inbox")>;
// Shard or supervisor -> sink: finished events.
using events_atom = caf::atom_constant<caf::atom("kl_events")>;
// Shard -> supervisor: parked keys whose lane retired (shard_report).
using parked_gone_atom = caf::atom_constant<caf::atom("kl_pgone")>;
// Shard to itself: retire lanes that lingered long enough.
using linger_atom = caf::atom_constant<caf::atom("kl_linger")>;
// Key table -> shard: keys wait for a slot (or lanes exceed a lowered
// cap), retire idle lanes now.
using reclaim_atom = caf::atom_constant<caf::atom("kl_reclm")>;
// Completion from outside the handler's call frame, to the lane's shard.
using complete_atom = caf::atom_constant<caf::atom("kl_done")>;
// Shard to itself: give lanes that spent their turn another.
using resume_atom = caf::atom_constant<caf::atom("kl_resume")>;
// Shard to itself: a handler timer of a lane fired.
using timer_atom = caf::atom_constant<caf::atom("kl_timer")>;
// Operator -> supervisor: replay a parked key.
using replay_atom = caf::atom_constant<caf::atom("kl_replay")>;
// Operator -> supervisor: discard a parked key.
using discard_atom = caf::atom_constant<caf::atom("kl_discard")>;
// Engine -> supervisor, sink: the live settings changed (reload).
using reload_atom = caf::atom_constant<caf::atom("kl_reload")>;
// Sink -> supervisor -> shards: where is this sequence number (stall log)?
using locate_atom = caf::atom_constant<caf::atom("kl_locate")>;
// Supervisor or shard -> sink: here it is, and what holds it.
using located_atom = caf::atom_constant<caf::atom("kl_where")>;
// Sink to itself: see whether output is stalled.
using stall_atom = caf::atom_constant<caf::atom("kl_stall")>;
// Sink to itself: resize the automatic window.
using window_atom = caf::atom_constant<caf::atom("kl_window")>;
// Shard -> sink (order none or per_key, window "auto"): how long the
// events a round finished took, in nanoseconds since their first attempt
// (their outputs left for the application without the sink).
using measure_atom = caf::atom_constant<caf::atom("kl_measure")>;
// Supervisor -> sink: my handle (the sink asks it to locate events).
using supervisor_atom = caf::atom_constant<caf::atom("kl_super")>;
// Supervisor or shard to itself: idle for a while, give memory back.
using trim_atom = caf::atom_constant<caf::atom("kl_trim")>;
/// A shard's keyed-state checkpoint timer.
using checkpoint_atom = caf::atom_constant<caf::atom("kl_ckpt")>;
// Target's shard -> asking lane's shard: the asked event ended (its
// outcome, error and, if ok, a copy of its result).
using answer_atom = caf::atom_constant<caf::atom("kl_answer")>;
// Shard to itself: a handler's `tell_after` timer is due.
using tell_timer_atom = caf::atom_constant<caf::atom("kl_tellat")>;
// Shard to itself: the earliest attempt deadline it armed has come (one
// timer per shard, not one per attempt; see shard::arm_timeout).
using timeout_atom = caf::atom_constant<caf::atom("kl_tmout")>;

} // namespace keylane::detail

CAF_ALLOW_UNSAFE_MESSAGE_TYPE(keylane::detail::batch_ptr)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(keylane::detail::result_box_ptr)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(keylane::key)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(keylane::detail::op_reply)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(keylane::settings_ptr)
