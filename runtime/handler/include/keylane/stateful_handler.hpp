// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include <caf/error.hpp>
#include <caf/expected.hpp>

#include "keylane/codec.hpp"
#include "keylane/detail/state_record.hpp"
#include "keylane/detail/state_slot.hpp"
#include "keylane/detail/unique_function.hpp"
#include "keylane/handler.hpp"

namespace keylane {

/// Says where a payload sits in a replayable source, so that keyed state
/// can count each event once although the source delivers it again after
/// a crash. Specialise it for a payload type with `available = true` and
/// `static bool of(const Payload&, std::string& stream, int64_t& position)`
/// (false: this payload has no position). Positions grow along a stream,
/// and a key's events come from one stream in order (a Kafka partition:
/// `keylane/kafka/record.hpp` specialises it for `kafka::record`).
template <class Payload, class = void>
struct state_origin {
  /// Whether payloads of this type carry a source position.
  static constexpr bool available = false;
};

/// How keylane takes back a failed attempt's changes to a key's state
/// (with `state.rollback = true`, the default). docs/state.md measures both.
enum class rollback_by {
  /// keylane copies the whole state before each attempt (encodes it, for
  /// a `State` that is not copyable) and puts the copy back when the
  /// attempt fails. Nothing to do in the handler; each event costs a copy
  /// of the whole state, failed or not.
  copy,
  /// The handler records, with `undo`, how to take back each change as it
  /// makes it; keylane copies nothing and, when the attempt fails, runs
  /// the attempt's undo steps, latest first. Each event costs what it
  /// changed; a change made without an `undo` stays when the attempt fails.
  journal,
};

namespace detail {

/// The state of one `stateful_handler` instance as its lane drives it.
template <class Payload, class Result, class State>
class typed_state_slot final : public state_slot {
public:
  State value{};

  caf::error load(const state_record* rec) override {
    journal_.clear();
    if (!rec) {
      value = State{};
      return {};
    }
    auto x = codec<State>::decode(rec->state);
    if (!x)
      return std::move(x.error());
    value = std::move(*x);
    return {};
  }

  caf::expected<std::string> encode() override {
    return codec<State>::encode(value);
  }

  caf::error keep() override {
    if (by_journal) {
      journal_.clear(); // the last attempt's steps: it ended, kept
      recording_ = true;
      return {};
    }
    if constexpr (std::is_copy_assignable_v<State>) {
      before_ = value;
      return {};
    } else {
      auto bytes = codec<State>::encode(value);
      if (!bytes)
        return std::move(bytes.error());
      before_bytes_ = std::move(*bytes);
      return {};
    }
  }

  void restore() override {
    if (by_journal) {
      auto steps = std::move(journal_);
      journal_.clear();
      for (auto i = steps.rbegin(); i != steps.rend(); ++i) {
        try {
          (*i)();
        } catch (...) {
          // One step that cannot run must not keep the others from it.
        }
      }
      return;
    }
    if constexpr (std::is_copy_assignable_v<State>) {
      if (before_)
        value = std::move(*before_);
      before_.reset();
    } else {
      if (auto x = codec<State>::decode(before_bytes_))
        value = std::move(*x);
    }
  }

  bool origin(event_base& ev, std::string& stream,
              int64_t& position) override {
    if constexpr (state_origin<Payload>::available) {
      auto& e = static_cast<event<Payload, Result>&>(ev);
      return state_origin<Payload>::of(e.payload, stream, position);
    } else {
      (void) ev;
      (void) stream;
      (void) position;
      return false;
    }
  }

  /// Takes `f` as an undo step of the running attempt (`rollback_by::
  /// journal`); dropped while nothing records (copy mode, `state.rollback
  /// = false`, before the first attempt).
  template <class F>
  void undo(F&& f) {
    if (!by_journal || !recording_)
      return;
    journal_.emplace_back(
      [this, step = std::forward<F>(f)]() mutable { step(value); });
  }

  bool by_journal = false;

private:
  std::optional<State> before_;
  std::string before_bytes_;
  bool recording_ = false; // keep() ran: rollback is on
  std::vector<unique_function> journal_;
};

} // namespace detail

/// A handler with per-key state that outlives its lane. keylane loads the
/// key's `State` from `[state] store` before `on_activate` (a
/// default-constructed one for a key it has never seen), and writes it
/// back behind the lanes: at checkpoints (`state.checkpoint_ms`,
/// `state.checkpoint_events`), when the lane retires and at `stop()`, each
/// time as of a moment between two of the key's events, never in the
/// middle of one. After a crash the key resumes from its last written
/// state; the events after it are lost unless the source delivers them
/// again (the Kafka source does, and with a `state_origin` each is applied
/// once). A failed attempt's changes are undone (`state.rollback`), so a
/// parked key's state is as of its last good event.
///
/// `State` needs a `keylane::codec` (CAF's `inspect` is enough) and a
/// default constructor. Touch `state()` only from `on_activate`,
/// `on_event`, `on_retire` and callbacks running on the lane (response
/// handlers, `run_later`) before the event's completion finishes: a change
/// after that belongs to no event and may be written with the next one.
template <class Payload, class Result, class State>
class stateful_handler : public handler<Payload, Result> {
public:
  static_assert(codec<State>::available,
                "State needs a keylane::codec: give it an inspect() overload "
                "or specialise keylane::codec<State>");
  static_assert(std::is_default_constructible_v<State>,
                "State must be default-constructible (the state of a new key)");

  using state_type = State;

  /// A handler whose failed attempts are undone by `by` (see
  /// `rollback_by`; `copy` unless a handler asks for `journal`).
  explicit stateful_handler(rollback_by by = rollback_by::copy) {
    slot_.by_journal = by == rollback_by::journal;
  }

  /// The key's state: loaded before `on_activate`, written back by keylane.
  [[nodiscard]] State& state() noexcept { return slot_.value; }

  /// The key's state, read-only.
  [[nodiscard]] const State& state() const noexcept { return slot_.value; }

  /// The key's events that ended `ok` so far, over its whole life
  /// (retires, restarts and crashes included; each counted once): those
  /// whose changes the state holds. Skipped, failed and parked events are
  /// not counted (docs/state.md, "The API").
  [[nodiscard]] uint64_t applied_events() const noexcept {
    return slot_.meta.events;
  }

  detail::state_slot* keyed_state() noexcept final { return &slot_; }

protected:
  /// With `rollback_by::journal`: records how to take back a change the
  /// running attempt makes to `state()`, before or as it makes it. If the
  /// attempt fails (it fails, throws or times out), keylane calls `f` with
  /// the state, the attempt's steps latest first, before the key's next
  /// attempt or event; if it succeeds, they are dropped. `f` takes a
  /// `State&`, owns what it captures (the old value, not a reference into
  /// the state) and should not throw (a step that throws is skipped).
  /// Ignored with `rollback_by::copy` and with `state.rollback = false`.
  template <class F>
  void undo(F&& f) {
    slot_.undo(std::forward<F>(f));
  }

private:
  detail::typed_state_slot<Payload, Result, State> slot_;
};

} // namespace keylane
