// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

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

  /// `seq` of an item with no event that carries an idle lane handed from
  /// one shard to another (see `lane_transfer`): no event has this number.
  static constexpr uint64_t transfer_seq = UINT64_MAX;
  [[nodiscard]] bool is_transfer() const noexcept {
    return ev == nullptr && seq == transfer_seq;
  }
};
static_assert(sizeof(inbox_item) == 64, "an inbox item fills one line");

/// An idle lane on its way to another shard, in an inbox item's payload:
/// the lane, and what disposes of it if no shard takes it (a stop). It
/// travels through the inbox under its key's stripe, ahead of the key's
/// next events, so the new shard has the lane before its first event.
struct lane_transfer {
  void* lane;
  void (*drop)(void* lane) noexcept;

  [[nodiscard]] static inbox_item item(uint64_t lane_id,
                                       const lane_transfer& t) noexcept {
    inbox_item it{};
    it.seq = inbox_item::transfer_seq;
    it.lane = lane_id;
    std::memcpy(it.payload, &t, sizeof t);
    return it;
  }
  [[nodiscard]] static lane_transfer of(const inbox_item& it) noexcept {
    lane_transfer t;
    std::memcpy(&t, it.payload, sizeof t);
    return t;
  }
};
static_assert(sizeof(lane_transfer) <= inbox_item::payload_max);

} // namespace keylane::detail
