// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstdint>

#include "keylane/detail/event_base.hpp"
#include "keylane/outcome.hpp"

namespace keylane::detail {

/// A lane's running attempt: when it started, its shard's request mark
/// when its handler call began, and what a completion that finished
/// inside that call left (the lane keeps a failure's reason itself, off
/// its hot lines). Small and read by every event: the lane keeps it on its
/// first lines. Used only on the lane's shard thread.
class running_attempt {
public:
  /// The attempt started at `t`.
  void start(clock::time_point t) noexcept { started_ = t; }
  [[nodiscard]] clock::time_point started() const noexcept {
    return started_;
  }

  /// Its handler call begins, at the shard's request mark `mark`: no
  /// completion has finished inside it yet.
  void call(uint64_t mark) noexcept {
    done_ = false;
    status_ = outcome::pending;
    permanent_ = false;
    request_mark_ = mark;
  }
  /// The shard's request mark when the handler call began.
  [[nodiscard]] uint64_t request_mark() const noexcept {
    return request_mark_;
  }

  /// A completion finished inside the call; false if one did before (the
  /// first one stands).
  [[nodiscard]] bool finish(outcome status, bool permanent) noexcept {
    if (done_)
      return false;
    done_ = true;
    status_ = status;
    permanent_ = permanent;
    return true;
  }
  /// A completion finished inside the call.
  [[nodiscard]] bool done() const noexcept { return done_; }
  /// Its outcome (valid once `done`).
  [[nodiscard]] outcome status() const noexcept { return status_; }
  /// Its failure is permanent (valid once `done`).
  [[nodiscard]] bool permanent() const noexcept { return permanent_; }

private:
  clock::time_point started_;
  uint64_t request_mark_ = 0;
  outcome status_ = outcome::pending;
  bool done_ = false;
  bool permanent_ = false;
};

} // namespace keylane::detail
