// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <caf/expected.hpp>

#include "keylane/key.hpp"

namespace keylane::detail {

/// A message a key sent with `tell` and keeps in its record until the
/// target's state holds it (docs/messaging.md, "Exactly once").
struct kept_message {
  /// The target key.
  keylane::key to;
  /// The sender's number for it: 1, 2, ... over the sender's whole life.
  uint64_t number = 0;
  /// For a timer the key set to itself (`tell_after`): when it is due, in
  /// milliseconds since the Unix epoch; 0 for a message to send now.
  int64_t due_ms = 0;
  /// The payload's codec bytes.
  std::string payload;
};

/// What a state store holds for one key: the handler's state as its codec
/// wrote it, and what keylane keeps beside it. A record is written whole,
/// at a moment between two of the key's events, so `state` is the fold of
/// exactly the key's first `events` events (no torn or mixed state).
struct state_record {
  /// Events applied to this key's state since it was first created,
  /// across lanes, restarts and crashes (each counted once).
  uint64_t events = 0;
  /// For each replayable source stream its events came from ("topic/3" for
  /// a Kafka partition), the position of the last event applied: a
  /// redelivered event at or below it was applied already.
  std::vector<std::pair<std::string, int64_t>> origins;
  /// Messages this key numbered so far (the last `kept_message::number`).
  uint64_t sent = 0;
  /// Its messages that may not have reached their target's state yet:
  /// sent again (and dropped there if they had) after a restart; and its
  /// timers to itself that have not fired into its state yet: armed again
  /// after a restart.
  std::vector<kept_message> outbox;
  /// For each key that sent this one messages, the number of the last one
  /// applied (integer keys first, by value, then string keys by bytes): a
  /// message at or below it was applied already.
  std::vector<std::pair<keylane::key, uint64_t>> inbox;
  /// Milliseconds since the Unix epoch when the record was taken.
  int64_t taken_at_ms = 0;
  /// The state's codec bytes.
  std::string state;

  /// The position stored for `stream`, or -1.
  [[nodiscard]] int64_t position(std::string_view stream) const noexcept;
  /// Sets the position of `stream` (adding the stream if new).
  void advance(std::string_view stream, int64_t position);
  /// The number of the last message applied from `sender`, or 0.
  [[nodiscard]] uint64_t received(const keylane::key& sender) const noexcept;
  /// Notes message `number` of `sender` applied.
  void receive(const keylane::key& sender, uint64_t number);
};

/// The record's bytes: a magic and version, the fields, and a checksum.
[[nodiscard]] std::string encode_state_record(const state_record& r);

/// The record `encode_state_record` wrote; `errc::state_store_failed`
/// saying what is wrong for anything else (truncated, wrong checksum,
/// unknown version).
[[nodiscard]] caf::expected<state_record>
decode_state_record(std::string_view bytes);

} // namespace keylane::detail
