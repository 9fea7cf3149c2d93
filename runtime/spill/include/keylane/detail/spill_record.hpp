// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include <caf/expected.hpp>

#include "keylane/detail/event_base.hpp"

namespace keylane::detail {

/// An event as the spill file holds it: the event's own fields, with its
/// payload and result already encoded by their codecs (`payload_ops`).
struct spill_record {
  uint64_t seq = 0;
  keylane::key k;
  outcome status = outcome::pending;
  std::string error;
  uint32_t attempts = 0;
  uint64_t park_id = 0;
  clock::time_point submitted;
  clock::time_point started;
  std::string payload;
  std::optional<std::string> result;
};

/// The bytes of `r` (fixed-width little-endian fields, length-prefixed
/// strings).
[[nodiscard]] std::string encode(const spill_record& r);

/// The record `encode` wrote; fails with `errc::spill_failed` on bytes that
/// are cut short or malformed.
[[nodiscard]] caf::expected<spill_record> decode_spill(std::string_view bytes);

} // namespace keylane::detail
