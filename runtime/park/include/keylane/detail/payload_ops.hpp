// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include <caf/error.hpp>
#include <caf/expected.hpp>

#include "keylane/detail/event_base.hpp"
#include "keylane/key.hpp"
#include "keylane/park_store.hpp"

namespace keylane::detail {

/// What the engine needs of a payload type to park and replay its events;
/// `runtime<P, R>` fills it from `codec<P>` and `P`'s copy constructor.
struct payload_ops {
  /// `park` writes bytes (a durable store can keep them).
  bool bytes = false;
  /// `park` keeps a copy of the payload (enough for a memory store).
  bool copies = false;
  /// Fills `rec.payload` (bytes) or `rec.object` (a copy) from `ev`.
  std::function<caf::error(const event_base& ev, parked_record& rec,
                           bool want_bytes)>
    park;
  /// A fresh, unsubmitted event for the payload of `rec`.
  std::function<caf::expected<event_ptr>(const parked_record& rec)> revive;
  /// `spill` and `unspill` exist (the payload and result have codecs).
  bool spills = false;
  /// Encodes the payload and, if set, the result of `ev` (sink spill).
  std::function<caf::error(const event_base& ev, std::string& payload,
                           std::optional<std::string>& result)>
    spill;
  /// A fresh event of `k` with the payload and result decoded.
  std::function<caf::expected<event_ptr>(
    const key& k, std::string_view payload,
    const std::optional<std::string>& result)>
    unspill;
  /// Set when the payload has a codec (`messaging.exactly_once` needs it):
  /// the payload bytes of message `ev`, kept in its sender's state.
  std::function<caf::expected<std::string>(const event_base& ev)>
    encode_message;
  /// The event that carries message `ev`'s payload (moved out of it) as
  /// message `o`.
  std::function<event_ptr(event_base& ev, message_origin o)> keep_message;
  /// The event of message `o` to `to` from its kept bytes (sent again
  /// after a restart).
  std::function<caf::expected<event_ptr>(const key& to, std::string_view payload,
                                         message_origin o)>
    revive_message;
  /// Set when an event's payload can travel by value in a shard's inbox
  /// (`inbox_item`): `inline_fill` copies the payload of `submit`'s
  /// context into an item's bytes, `inline_event` builds the event of an
  /// integer key from them, on the shard's thread.
  void (*inline_fill)(void* ctx, void* bytes) = nullptr;
  event_ptr (*inline_event)(const key& k, const void* bytes) = nullptr;
};

} // namespace keylane::detail
