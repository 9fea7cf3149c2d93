// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

#include <caf/actor.hpp>

#include "keylane/detail/result_box.hpp"
#include "keylane/outcome.hpp"

namespace keylane::detail {

class lane;

/// The untyped half of a completion: which lane and which invocation it
/// finishes. Finishing inside the handler's own call (on the lane's thread)
/// writes straight into the event; anywhere else it becomes a message to
/// the lane's shard, which drops it if the lane or that invocation is gone.
class completion_core {
public:
  completion_core() noexcept = default;
  completion_core(lane* owner, uint64_t lane_id, caf::abstract_actor* host,
                  uint64_t token, void* slot,
                  std::chrono::steady_clock::time_point deadline = {}) noexcept
    : owner_(owner), lane_id_(lane_id), host_(host), token_(token),
      slot_(slot), deadline_(deadline) {}
  /// Tag of the move that hands a fresh core to its `completion` inside
  /// the handler call: no pin (see `pin`).
  struct hand_over_t {};
  static constexpr hand_over_t hand_over{};
  completion_core(hand_over_t, completion_core&& other) noexcept
    : owner_(other.owner_), lane_id_(other.lane_id_), host_(other.host_),
      token_(other.token_), slot_(other.slot_), deadline_(other.deadline_),
      handle_(std::move(other.handle_)) {
    other.owner_ = nullptr;
  }
  completion_core(completion_core&& other) noexcept;
  completion_core& operator=(completion_core&& other) noexcept;
  completion_core(const completion_core&) = delete;
  completion_core& operator=(const completion_core&) = delete;
  ~completion_core() {
    if (owner_ != nullptr) // inline: every completion ends here, finished
      drop();
  }

  /// True until the event is finished through this object.
  [[nodiscard]] bool pending() const noexcept { return owner_ != nullptr; }

  /// True when called inside the handler's own `on_event` call of this
  /// very invocation (not a later one).
  [[nodiscard]] bool synchronous() const noexcept;

  /// When the runtime times this attempt out; the epoch (zero) without
  /// an attempt timeout.
  [[nodiscard]] std::chrono::steady_clock::time_point deadline() const noexcept {
    return deadline_;
  }

  /// The typed result slot (a `std::optional<Result>*`), sync path only.
  [[nodiscard]] void* slot() const noexcept { return slot_; }

  /// Finishes the invocation with `status`; `box` carries the result;
  /// `permanent` rules out retries of a failure.
  void finish(outcome status, std::string&& error, result_box_ptr box,
              bool permanent = false);
  /// Finishes without an error, inside the handler's own call of this
  /// invocation (`synchronous()` was true): the result, if any, is already
  /// in the slot. The path of a handler that completes at once, with no
  /// string and no second look at the thread's current call.
  void finish_in_call(outcome status) noexcept;

private:
  // Keeps the shard alive once the completion leaves the handler's call
  // frame, so a late finish can still be sent; the sync path needs no
  // refcount. A completion leaves that frame only by a move, and the
  // handler makes the first one inside its call, so every move but the
  // runtime's own hand-over pins: a handler that finishes at once touches
  // no refcount (two atomics on the shard's control block per event,
  // which the producer's wake-ups touch too). `owner_` is touched only
  // inside its own handler call.
  void pin();
  // Finishes an unfinished completion that goes away: a failure.
  void drop() noexcept;
  lane* owner_ = nullptr;
  uint64_t lane_id_ = 0;
  caf::abstract_actor* host_ = nullptr;
  uint64_t token_ = 0;
  void* slot_ = nullptr;
  std::chrono::steady_clock::time_point deadline_{};
  caf::actor handle_;
};

} // namespace keylane::detail
