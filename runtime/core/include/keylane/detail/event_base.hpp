// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

#include "keylane/key.hpp"
#include "keylane/outcome.hpp"

namespace keylane::detail {

using clock = std::chrono::steady_clock;

/// Who sent a message kept in its sender's state, and its number there;
/// `timer`: a timer the key set to itself, kept until it fires into its
/// state.
struct message_origin {
  keylane::key sender;
  uint64_t number = 0;
  bool timer = false;
};

/// The type-erased part of an accepted event. One allocation carries an
/// event from submit through its lane and the sink to the application.
/// Owned by exactly one party at a time (ingress, supervisor, lane, sink,
/// output queue), so it needs no synchronisation of its own.
///
/// The small fields share one word: an event of a 24-byte payload and an
/// 8-byte result is 192 bytes, three cache lines in mimalloc's bin of that
/// size, where at 208 it took the 224-byte bin and every other event
/// shared a line with its neighbour, which another thread was writing
/// (docs/performance.md: about 5–10 % of the CPU per event).
struct event_base {
  event_base(keylane::key k) : k(std::move(k)) {}
  virtual ~event_base() = default;
  /// An ask's target event ended (`flags & event_flags::asked`): sends the
  /// asker its outcome and result. Events that are not asks have none.
  virtual void answer() noexcept {}
  /// A message kept in its sender's state (`messaging.exactly_once`): who
  /// sent it, so that a stateful target applies it once. Null otherwise.
  [[nodiscard]] virtual const message_origin* origin() const noexcept {
    return nullptr;
  }
  event_base(const event_base&) = delete;
  event_base& operator=(const event_base&) = delete;

  /// Sequence number, assigned at submit; unique and dense from 0.
  uint64_t seq = 0;
  /// The event's key.
  keylane::key k;
  /// When `submit` accepted it.
  clock::time_point submitted;
  /// When its first attempt started (its lane set it).
  clock::time_point started;
  /// How it ended.
  outcome status = outcome::pending;
  /// Sent to the supervisor because its key is parked (it parks behind).
  bool parked_behind = false;
  /// `event_flags`: a message from a handler (tell, ask, timer), and an
  /// ask whose asker waits for `answer`. In the padding before `attempts`.
  uint8_t flags = 0;
  /// Handler attempts made (more than one when it was retried).
  uint32_t attempts = 0;
  /// Why it failed (empty unless `status == failed`).
  std::string error;
  /// Its park store id while it is parked, or when `replay` revived it from
  /// the store (then it leaves the store once it ends); 0 otherwise.
  uint64_t park_id = 0;
  /// The lane it is sent to (see `backlog::slot`).
  uint64_t lane = 0;
  /// The next event in the one list that holds this one, if any: its key's
  /// held events while the key waits for a slot of the cap (the list in
  /// `backlog::slot`), or its lane's queue (`event_fifo`). Linking through
  /// the event, which the holder touches anyway, spares a queue buffer
  /// (a cache line missed per event with thousands of keys).
  event_base* next = nullptr;
};

/// Bits of `event_base::flags`.
namespace event_flags {
/// Sent by a handler (`tell`, `ask`, a timer): it holds a unit of
/// `messaging.max_in_flight` until it ends.
inline constexpr uint8_t message = 1;
/// An ask: its end answers the asker (`event_base::answer`).
inline constexpr uint8_t asked = 2;
} // namespace event_flags

/// Deletes an event; used by containers that hold raw owning pointers.
struct event_deleter {
  void operator()(event_base* p) const noexcept { delete p; }
};

using event_ptr = std::unique_ptr<event_base, event_deleter>;

} // namespace keylane::detail
