// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include <caf/error.hpp>
#include <caf/expected.hpp>

#include "keylane/detail/event_base.hpp"
#include "keylane/detail/state_record.hpp"

namespace keylane::detail {

/// The untyped face of a handler's keyed state, for its lane: load it,
/// encode it for a write, keep a copy before an attempt and restore it
/// after a failed one, and name an event's source position. `meta` is the
/// record's bookkeeping (its `state` bytes unused). Used only on the lane's
/// shard thread.
class state_slot {
public:
  virtual ~state_slot() = default;

  /// Takes the state of `rec`, or a default state when null.
  [[nodiscard]] virtual caf::error load(const state_record* rec) = 0;
  /// The state's codec bytes.
  [[nodiscard]] virtual caf::expected<std::string> encode() = 0;
  /// Keeps the state as it is now, for `restore`.
  [[nodiscard]] virtual caf::error keep() = 0;
  /// Goes back to the state `keep` kept.
  virtual void restore() = 0;
  /// The source stream and position of `ev`'s payload; false if none.
  virtual bool origin(event_base& ev, std::string& stream,
                      int64_t& position) = 0;

  state_record meta;
  /// Messages kept in `meta` that leave with its next write; and the
  /// kept messages of other keys applied here, which their senders may
  /// forget once that write is done (`messaging.exactly_once`).
  std::vector<event_ptr> unsent;
  std::vector<std::pair<keylane::key, uint64_t>> delivered;
};

} // namespace keylane::detail
