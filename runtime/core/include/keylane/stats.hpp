// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "keylane/key.hpp"
#include "keylane/latency.hpp"

namespace keylane {

/// A snapshot of a running runtime. Fields are read one by one without a
/// lock, so they are each exact but not taken at one instant.
struct stats {
  /// Events accepted so far: by `submit`, plus those `replay` resubmitted.
  uint64_t accepted = 0;
  /// Events handed to the application (callback returned or pulled).
  uint64_t delivered = 0;
  /// Events that ended with a result.
  uint64_t ok = 0;
  /// Events the handler skipped.
  uint64_t skipped = 0;
  /// Events that failed (and were not parked).
  uint64_t failed = 0;
  /// Events moved to the park store (tombstones delivered).
  uint64_t parked = 0;
  /// Events resubmitted by `replay`.
  uint64_t replayed = 0;
  /// Handler attempts beyond the first (retries), over all events.
  uint64_t retries = 0;
  /// `submit` calls rejected, by any reason.
  uint64_t rejected = 0;
  /// Lanes alive now (including retiring ones).
  uint64_t active_lanes = 0;
  /// Most lanes ever alive at once.
  uint64_t peak_active_lanes = 0;
  /// Keys waiting for a lane slot.
  uint64_t waiting_keys = 0;
  /// Lanes started so far, one per key activation (the name predates
  /// lanes being objects inside shard actors; nothing is spawned).
  uint64_t lanes_spawned = 0;
  /// Lanes retired so far.
  uint64_t lanes_retired = 0;
  /// Idle lanes handed from a busy shard to a less busy one (a lane keeps
  /// its handler and state when it moves).
  uint64_t lanes_moved = 0;
  /// Results the sink holds back for ordering.
  uint64_t sink_buffered = 0;
  /// Most results the sink ever held back.
  uint64_t peak_sink_buffered = 0;
  /// The sequence number the sink waits for (global order only).
  uint64_t awaited_seq = 0;
  /// How long the sink has waited for `awaited_seq` (0 when nothing waits).
  std::chrono::nanoseconds awaited_age{0};
  /// The window in force (`window = "auto"` changes it as it measures).
  uint64_t window = 0;
  /// Results the sink wrote to its spill file so far (`sink.spill_path`).
  uint64_t spilled = 0;
  /// Results in the spill file now, and its bytes.
  uint64_t spill_held = 0;
  uint64_t spill_bytes = 0;
  /// Most results ever in the spill file at once.
  uint64_t peak_spill_held = 0;
  /// Spill writes the disk refused (each result stays in memory instead).
  uint64_t spill_write_failures = 0;
  /// Events accepted that no shard has taken yet (approximate): of parked
  /// keys, waiting for the supervisor, or in a shard's inbox on the way to
  /// a live lane. Events of keys waiting for a slot of the cap are not
  /// counted (`waiting_keys` counts those keys).
  uint64_t ingress_depth = 0;
  /// End-to-end latency of the events the sink passed on, submit to output
  /// (while `metrics.latency` is on).
  latency_histogram latency;

  /// Parkings the park store refused (a full or failing disk); each is
  /// tried again until it works, its events waiting meanwhile.
  uint64_t park_write_failures = 0;

  // -- keyed state ([state]) ----------------------------------------------------

  /// Keys whose state was loaded (one per activation of a stateful handler),
  /// and of them, loads that failed (the store or the record was bad).
  uint64_t state_loads = 0;
  uint64_t state_load_failures = 0;
  /// How long loads took (the store's read and the lookup of unwritten
  /// state; the decode is not counted).
  latency_histogram state_load_latency;
  /// Key states written to the store, and their bytes.
  uint64_t state_writes = 0;
  uint64_t state_write_bytes = 0;
  /// Batches written (checkpoints, retires and stops share them).
  uint64_t state_checkpoints = 0;
  /// Batch writes the store refused (each is retried until it works).
  uint64_t state_write_failures = 0;
  /// Key states taken but not yet written.
  uint64_t state_pending = 0;
  /// While state waits to be written: the time since the last batch was
  /// written; 0 when nothing waits.
  std::chrono::nanoseconds state_checkpoint_age{0};

  // -- messages between keys ([messaging]) ----------------------------------------

  /// Messages handlers sent to keys (`tell`, `ask`, due timers), and the
  /// `tell`s and `ask`s refused because `max_in_flight` were in flight.
  uint64_t messages_sent = 0;
  uint64_t messages_refused = 0;
  /// Messages sent or reserved whose events have not ended yet.
  uint64_t messages_in_flight = 0;
  /// Asks made, and of them those that ran out of time.
  uint64_t asks = 0;
  uint64_t ask_timeouts = 0;
  /// `tell_after` timers waiting, fired, and cancelled before they fired.
  uint64_t timers_pending = 0;
  uint64_t timers_fired = 0;
  uint64_t timers_cancelled = 0;
};

/// An event that `stop()` ended before it was delivered.
struct unfinished_event {
  uint64_t seq;
  keylane::key key;
  /// "queued" (never started), "running" (its handler had not finished),
  /// "completed" (ended but not delivered).
  std::string stage;
  /// True if it was written to the durable park store (`park = sqlite`):
  /// its key is parked when the runtime starts again on that store.
  bool kept = false;
};

/// What `stop()` reports.
struct stop_report {
  uint64_t accepted = 0;
  uint64_t delivered = 0;
  /// Every accepted event that was not delivered, by sequence number.
  std::vector<unfinished_event> unfinished;
  /// False when `stop()` was called on one of the runtime's own threads
  /// (the output callback, a handler, a `run_later` timer, an actor of its
  /// system), where waiting for the runtime would wait for that very
  /// thread: the stop has begun — submits get `errc::stopped`, the lanes
  /// end, a waiting `drain()` returns — and the counts are those of that
  /// moment, with no `unfinished`. The owner's `stop()` (or the runtime's
  /// destructor) finishes it and reports in full.
  bool complete = true;
};

} // namespace keylane
