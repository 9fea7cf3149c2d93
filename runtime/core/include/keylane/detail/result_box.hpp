// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <memory>
#include <optional>
#include <utility>

namespace keylane::detail {

/// Carries a result that completes an event asynchronously, inside a
/// message to the lane, into the event's typed result slot.
struct result_box {
  virtual ~result_box() = default;
  /// Moves the value into `slot`, which points to a `std::optional<R>`.
  virtual void apply(void* slot) = 0;
};

template <class Result>
struct typed_result_box final : result_box {
  explicit typed_result_box(Result x) : value(std::move(x)) {}
  void apply(void* slot) override {
    static_cast<std::optional<Result>*>(slot)->emplace(std::move(value));
  }
  Result value;
};

using result_box_ptr = std::shared_ptr<result_box>;

} // namespace keylane::detail
