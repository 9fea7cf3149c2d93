// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include <caf/error.hpp>

#include "keylane/config.hpp"
#include "keylane/detail/event_base.hpp"
#include "keylane/detail/state_slot.hpp"
#include "keylane/key.hpp"
#include "keylane/outcome.hpp"

namespace keylane::detail {

class logger;
class messaging;
class state_service;
struct state_round;

/// A lane's place in its key's keyed state: the handler instance's state
/// slot (or none), whether the state changed since its last write, and
/// the events and messages that write will make durable. The lane owns
/// one by value and drives it through these verbs; it passes in the
/// runtime services a verb needs, and tells its shard itself when a verb
/// reports that the state just became dirty. Used only on the lane's
/// shard thread.
class state_cursor {
public:
  /// How an attempt's state begins (`begin`).
  enum class start {
    ready,          ///< run the attempt
    applied_before, ///< the state holds the event already: skip it
    failed,         ///< its state could not be copied (`err` says why)
  };

  /// Takes `slot` (a fresh handler instance's keyed state, or null: no
  /// state) and loads the key's record from `store` into it. On an error
  /// the cursor holds no slot. `exactly_once`: the key's messages are kept
  /// in its state (`messaging.exactly_once`, and the payload can be kept).
  [[nodiscard]] caf::error load(state_slot* slot, const keylane::key& k,
                                state_service& store, bool exactly_once);
  /// The handler instance is gone, and its slot with it.
  void detach() noexcept { slot_ = nullptr; }

  /// The bytes at its front that every event reads (its flags and
  /// `slot_`): the lane keeps them on a hot line.
  static constexpr size_t hot_bytes = 16;

  /// The handler keeps keyed state.
  [[nodiscard]] bool active() const noexcept { return slot_ != nullptr; }
  /// Changed since its last write.
  [[nodiscard]] bool dirty() const noexcept {
    return slot_ != nullptr && dirty_;
  }
  /// A write is due as soon as the running event ends.
  [[nodiscard]] bool write_due() const noexcept { return snapshot_due_; }
  /// The key's tells are kept in its state (`keep`, `send_with_write`).
  [[nodiscard]] bool keeps_messages() const noexcept {
    return keeps_messages_;
  }

  /// Before an attempt of `ev` (an active cursor): whether it was applied
  /// before (a source or a sender delivered it again), and, under
  /// `rollback`, a copy of the state to go back to.
  [[nodiscard]] start begin(event_base& ev, bool rollback, caf::error& err);
  /// A failed attempt: back to the copy `begin` kept (under `rollback`).
  void undo(bool rollback);
  /// `ev` ended well (ok or skipped): counted, its source position and
  /// its message's sender noted.
  void note_applied(outcome status, const event_base& ev);
  /// Event `seq` (`ev`, if known) finished: its write makes it durable.
  /// True if the state just became dirty (the caller tells its shard).
  [[nodiscard]] bool note_finished(uint64_t seq, const event_base* ev,
                                   const settings& pol);
  /// The state changed outside an event. True if it just became dirty.
  [[nodiscard]] bool mark_dirty() noexcept {
    if (dirty_)
      return false;
    dirty_ = true;
    return true;
  }
  /// Keeps the last write as it stands (stop, with a running event whose
  /// changes cannot be told apart without rollback).
  void keep_last_write() noexcept { dirty_ = false; }
  /// A checkpoint: true if the state should be written now; while an event
  /// is `running`, the write is due when it ends instead.
  [[nodiscard]] bool checkpoint(bool running) noexcept {
    if (!slot_ || !dirty_)
      return false;
    if (running) {
      snapshot_due_ = true; // between attempts or running: after it ends
      return false;
    }
    return true;
  }
  /// Fills `r` with the state's write, its finished events and its kept
  /// messages, and starts over; false if there is nothing to write (no
  /// state, stored state disabled, or the state cannot be encoded: logged).
  [[nodiscard]] bool take_snapshot(const keylane::key& k, state_service& store,
                                   messaging& msg, logger& log,
                                   state_round& r);

  /// Keeps message `m` in the key's record (its number is the next one
  /// sent) and returns that number.
  [[nodiscard]] uint64_t keep(kept_message m);
  /// Sends `ev` once the write that keeps it is done.
  void send_with_write(event_ptr ev) { slot_->unsent.push_back(std::move(ev)); }
  /// Forgets the kept timer numbered `number` (cancelled). True if the
  /// state just became dirty.
  [[nodiscard]] bool forget_timer(uint64_t number);

private:
  void end_kept(const message_origin& o);
  void forget_delivered(const keylane::key& k, messaging& msg,
                        std::vector<kept_message>& outbox);

  // What every event reads comes first, the flags ahead of the pointer:
  // the lane keeps these `hot_bytes` on its second line.
  bool dirty_ = false;
  bool snapshot_due_ = false; // a checkpoint came while an event ran
  bool redelivered_ = false;  // the running event was applied before
  bool has_origin_ = false;   // and its source position, if it has one
  // `messaging.exactly_once` for this key: its tells are kept in its state
  // (state_slot::unsent, ::delivered).
  bool keeps_messages_ = false;
  state_slot* slot_ = nullptr;
  size_t since_write_ = 0;
  int64_t origin_pos_ = 0;
  // The events whose changes the next write makes durable.
  std::vector<uint64_t> applied_seqs_;
  std::string origin_stream_;
};

} // namespace keylane::detail
