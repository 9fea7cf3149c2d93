// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <utility>

#include "keylane/detail/completion_core.hpp"

namespace keylane {

template <class Result>
class shared_completion;

/// Finishes one event, exactly once: `ok`, `skip`, `fail` (retryable) or
/// `fail_permanently`. It may be
/// called at once inside `on_event`, or later from a response handler, a
/// timer, or any other thread; the key's next event starts only after it.
/// A completion destroyed unfinished fails its event ("dropped completion").
/// Calls after the first are ignored. Move-only; not for concurrent use.
template <class Result>
class completion {
public:
  // By reference: a by-value core would be one more move, and every move
  // but the hand-over pins the shard (see `completion_core::pin`).
  explicit completion(detail::completion_core&& core) noexcept
    : core_(detail::completion_core::hand_over, std::move(core)) {}
  completion(completion&&) noexcept = default;
  completion& operator=(completion&&) noexcept = default;

  /// Finishes the event with a result.
  void ok(Result value) {
    if (!core_.pending())
      return;
    if (core_.synchronous()) {
      static_cast<std::optional<Result>*>(core_.slot())->emplace(std::move(value));
      core_.finish_in_call(outcome::ok);
    } else {
      core_.finish(outcome::ok, {},
                   std::make_shared<detail::typed_result_box<Result>>(
                     std::move(value)));
    }
  }

  /// Finishes the event without a result: a tombstone, not an error.
  void skip() {
    if (core_.pending())
      core_.finish(outcome::skipped, {}, nullptr);
  }

  /// Fails this attempt, with a reason. The event is tried again if the
  /// retry policy (`[retry]`) allows another attempt; otherwise it fails.
  void fail(std::string reason) {
    if (core_.pending())
      core_.finish(outcome::failed, std::move(reason), nullptr);
  }

  /// Fails the event for good, without further attempts.
  void fail_permanently(std::string reason) {
    if (core_.pending())
      core_.finish(outcome::failed, std::move(reason), nullptr, true);
  }

  /// True until the event is finished through this object.
  [[nodiscard]] bool pending() const noexcept { return core_.pending(); }

  /// When the runtime gives up on this attempt (`attempt_timeout_ms` after
  /// it started it), for a handler that passes the time left on to a
  /// downstream call; `std::nullopt` when attempts have no timeout. Stays
  /// readable after the completion is finished.
  [[nodiscard]] std::optional<std::chrono::steady_clock::time_point>
  deadline() const noexcept {
    auto at = core_.deadline();
    if (at == std::chrono::steady_clock::time_point{})
      return std::nullopt;
    return at;
  }

  /// Moves this completion into a copyable handle, for code that copies
  /// its callbacks: `request(...).then(on_value, on_error)` in CAF copies
  /// both handlers, and each must be able to finish the event.
  [[nodiscard]] shared_completion<Result> share() && {
    return shared_completion<Result>{std::move(*this)};
  }

private:
  detail::completion_core core_;
};

/// A completion that can be copied: every copy finishes the same event, and
/// the first call through any of them wins, as with `completion`. Made by
/// `std::move(done).share()`. Copies may live on different threads, but
/// calls through them must not run at the same time.
template <class Result>
class shared_completion {
public:
  explicit shared_completion(completion<Result>&& done)
    : done_(std::make_shared<completion<Result>>(std::move(done))) {}

  /// Finishes the event with a result.
  void ok(Result value) const { done_->ok(std::move(value)); }

  /// Finishes the event without a result: a tombstone, not an error.
  void skip() const { done_->skip(); }

  /// Fails this attempt, with a reason (retried per `[retry]`).
  void fail(std::string reason) const { done_->fail(std::move(reason)); }

  /// Fails the event for good, without further attempts.
  void fail_permanently(std::string reason) const {
    done_->fail_permanently(std::move(reason));
  }

  /// True until the event is finished through any copy.
  [[nodiscard]] bool pending() const noexcept { return done_->pending(); }

  /// As `completion::deadline`.
  [[nodiscard]] std::optional<std::chrono::steady_clock::time_point>
  deadline() const noexcept {
    return done_->deadline();
  }

private:
  std::shared_ptr<completion<Result>> done_;
};

} // namespace keylane
