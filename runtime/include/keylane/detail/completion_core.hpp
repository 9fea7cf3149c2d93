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
  completion_core(completion_core&& other) noexcept;
  completion_core& operator=(completion_core&& other) noexcept;
  completion_core(const completion_core&) = delete;
  completion_core& operator=(const completion_core&) = delete;
  ~completion_core();

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
  void finish(outcome status, std::string error, result_box_ptr box,
              bool permanent = false);

private:
  // Keeps the shard alive once the completion leaves the handler's call
  // frame, so a late finish can still be sent; the sync path needs no
  // refcount. `owner_` is touched only inside its own handler call.
  void pin();
  lane* owner_ = nullptr;
  uint64_t lane_id_ = 0;
  caf::abstract_actor* host_ = nullptr;
  uint64_t token_ = 0;
  void* slot_ = nullptr;
  std::chrono::steady_clock::time_point deadline_{};
  caf::actor handle_;
};

} // namespace keylane::detail
