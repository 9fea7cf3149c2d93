// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <caf/expected.hpp>

namespace keylane::detail {

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
  /// Milliseconds since the Unix epoch when the record was taken.
  int64_t taken_at_ms = 0;
  /// The state's codec bytes.
  std::string state;

  /// The position stored for `stream`, or -1.
  [[nodiscard]] int64_t position(std::string_view stream) const noexcept;
  /// Sets the position of `stream` (adding the stream if new).
  void advance(std::string_view stream, int64_t position);
};

/// The record's bytes: a magic and version, the fields, and a checksum.
[[nodiscard]] std::string encode_state_record(const state_record& r);

/// The record `encode_state_record` wrote; `errc::state_store_failed`
/// saying what is wrong for anything else (truncated, wrong checksum,
/// unknown version).
[[nodiscard]] caf::expected<state_record>
decode_state_record(std::string_view bytes);

} // namespace keylane::detail
