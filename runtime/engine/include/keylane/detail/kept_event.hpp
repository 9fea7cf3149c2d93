// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <utility>

#include "keylane/event.hpp"

namespace keylane::detail {

/// The event of a message its sender's state keeps until delivered
/// (`messaging.exactly_once`): a plain event of the target key that names
/// its sender and number, so that a stateful target applies it once.
template <class Payload, class Result>
struct kept_event final : event<Payload, Result> {
  kept_event(keylane::key k, Payload p, message_origin o)
    : event<Payload, Result>(std::move(k), std::move(p)),
      from(std::move(o)) {}

  [[nodiscard]] const message_origin* origin() const noexcept override {
    return &from;
  }

  message_origin from;
};

} // namespace keylane::detail
