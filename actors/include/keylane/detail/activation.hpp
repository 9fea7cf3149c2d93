// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <memory>
#include <string>
#include <utility>

#include "keylane/detail/handler_maker.hpp"
#include "keylane/handler.hpp"

namespace keylane::detail {

/// A lane's part that builds its handler instances and keeps why it could
/// not: a reason that may pass (the handler could not be built or
/// activated: each attempt of an event tries again, a database that is
/// briefly down, so the event's retry policy decides when the key parks),
/// or one that will not (the lane is broken: every event fails with it).
/// Used only on the lane's shard thread.
class activation {
public:
  /// Builds instances with `maker` (null: none can be built).
  explicit activation(handler_maker* maker) noexcept : maker_(maker) {}

  /// A fresh instance, or null: then `error` or `broken` says why.
  [[nodiscard]] std::unique_ptr<handler_base> build() {
    error_.clear();
    std::string why;
    bool retryable = true;
    auto h = maker_->make(why, retryable);
    if (!h) {
      if (retryable)
        error_ = std::move(why);
      else
        broken_ = std::move(why);
    }
    return h;
  }
  /// The instance was built but could not be activated: each attempt
  /// tries again.
  void fail(std::string why) noexcept { error_ = std::move(why); }
  /// Instances can be built.
  [[nodiscard]] bool can_build() const noexcept { return maker_ != nullptr; }
  /// No instance can be built: the last failure becomes the lane's
  /// reason for every event.
  void give_up() noexcept { broken_ = std::exchange(error_, std::string{}); }

  /// Non-empty: every event fails with this reason.
  [[nodiscard]] const std::string& broken() const noexcept { return broken_; }
  /// Non-empty: the last build or activation failed, and may not again.
  [[nodiscard]] const std::string& error() const noexcept { return error_; }
  /// Notes whether the lane's first build failed, for its first attempt.
  void note_first() noexcept { just_failed_ = !error_.empty(); }
  /// True once after a failed first build: the first attempt has seen it
  /// (each later one tries again).
  [[nodiscard]] bool take_just_failed() noexcept {
    return std::exchange(just_failed_, false);
  }

private:
  handler_maker* maker_;
  std::string broken_;
  std::string error_;
  bool just_failed_ = false;
};

} // namespace keylane::detail
