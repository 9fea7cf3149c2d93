// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <optional>
#include <type_traits>

#include "keylane/detail/event_base.hpp"

namespace keylane {

/// An accepted event and, once it ended, its result. The application gets
/// each event back exactly once, through the output callback or `pull`.
template <class Payload, class Result>
struct event : detail::event_base {
  static_assert(std::is_nothrow_destructible_v<Payload>,
                "Payload must be nothrow destructible");
  static_assert(std::is_move_constructible_v<Payload>,
                "Payload must be move constructible");
  static_assert(std::is_move_constructible_v<Result>,
                "Result must be move constructible");

  event(keylane::key k, Payload p)
    : detail::event_base(std::move(k)), payload(std::move(p)) {}

  /// The submitted payload (the handler may have changed it).
  Payload payload;
  /// The handler's result; set only when `status == outcome::ok`.
  std::optional<Result> result;

  /// The key of this event.
  [[nodiscard]] const keylane::key& key() const noexcept { return k; }
};

} // namespace keylane
