// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstdint>

#include "keylane/errc.hpp"

namespace keylane {

/// What `submit` returns: accepted with a sequence number, or an error code.
/// Never ignored: a rejected event was not taken and is still the caller's.
class [[nodiscard]] submit_result {
public:
  /// An accepted event with sequence number `seq`.
  static submit_result accepted(uint64_t seq) noexcept { return {seq, errc::none}; }

  /// A rejected event.
  static submit_result rejected(errc code) noexcept { return {0, code}; }

  /// True when the event was accepted.
  explicit operator bool() const noexcept { return code_ == errc::none; }

  /// True when the event was accepted.
  [[nodiscard]] bool ok() const noexcept { return code_ == errc::none; }

  /// The sequence number (only meaningful when accepted).
  [[nodiscard]] uint64_t seq() const noexcept { return seq_; }

  /// Why it was rejected (`errc::none` when accepted).
  [[nodiscard]] errc code() const noexcept { return code_; }

private:
  submit_result(uint64_t seq, errc code) noexcept : seq_(seq), code_(code) {}
  uint64_t seq_;
  errc code_;
};

} // namespace keylane
