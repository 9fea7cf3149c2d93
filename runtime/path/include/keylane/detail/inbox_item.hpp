// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstddef>
#include <cstdint>

#include "keylane/detail/event_base.hpp"

namespace keylane::detail {

/// One entry of a shard's inbox: an event, or what it takes to build one
/// there. For a live lane of an integer key whose payload is small and
/// trivially copyable (`payload_ops::inline_fill`), `submit` allocates
/// nothing and writes only this item, one cache line, in the inbox's run
/// of items; the shard builds the event on its own thread (`open`). The
/// event otherwise crossed cores line by line: three lines written by the
/// submitting thread, each first touched by the shard at a different
/// moment (docs/performance.md).
struct inbox_item {
  static constexpr size_t payload_max = 24;
  event_base* ev; // the event, or null: build it from the fields below
  uint64_t seq;
  clock::time_point submitted;
  uint64_t lane;
  uint64_t key; // an integer key's number
  alignas(8) unsigned char payload[payload_max];
};
static_assert(sizeof(inbox_item) == 64, "an inbox item fills one line");

} // namespace keylane::detail
