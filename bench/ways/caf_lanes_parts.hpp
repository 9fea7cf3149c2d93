// SPDX-License-Identifier: Apache-2.0
#pragma once

// What the ways of keylane's shape without keylane's code share
// (caf_lanes.cpp, caf_lanes_featured.cpp): the heap event, a shard's inbox
// with its wake-up flag, the placement of a starting lane, and the CAF
// configuration, so that their rows differ only where the ways do.

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <caf/all.hpp>

#include <keylane/detail/mpmc_queue.hpp>
#include <keylane/key.hpp>

#include "../item.hpp"

namespace keylane::bench::caf_lanes_parts {

struct event;
using event_list = std::shared_ptr<std::vector<event*>>;

} // namespace keylane::bench::caf_lanes_parts

CAF_ALLOW_UNSAFE_MESSAGE_TYPE(keylane::bench::caf_lanes_parts::event_list)

namespace keylane::bench::caf_lanes_parts {

using wake_atom = caf::atom_constant<caf::atom("wake")>;
using done_atom = caf::atom_constant<caf::atom("done")>;

constexpr size_t inbox_batch = 1024;
constexpr uint64_t window = 65536; // keylane ways' runtime.window

// As keylane's event: the item, its sequence number and result, and room
// for what an event carries through retry and parking (an error text, an
// attempt count, two time points), so it spans the same three lines.
struct event {
  item it;
  uint64_t seq = 0;
  uint64_t result = 0;
  std::string error;
  std::chrono::steady_clock::time_point submitted;
  int64_t started_ns = 0;
  uint32_t attempts = 0;
  uint8_t status = 0;
  char pad[96];
};
static_assert(sizeof(event) == 192, "three lines, as keylane's event");

struct int_hash {
  size_t operator()(uint64_t k) const noexcept {
    return static_cast<size_t>(stable_hash(k));
  }
};

/// A shard's inbox of `Item`s, the flag that saves a wake-up message while
/// one is pending, and (with a cap) the flag of a pending reclaim.
template <class Item>
struct alignas(64) inbox {
  keylane::detail::mpmc_queue<Item> items;
  keylane::detail::producer_token token{items};
  alignas(64) std::atomic<bool> signalled{false};
  std::atomic<bool> reclaim_signalled{false};
  caf::actor actor;
};

/// Puts `x` in `box`, waking its shard if no wake-up is pending.
template <class Item>
bool send(inbox<Item>& box, const Item& x) {
  if (!box.items.enqueue(box.token, x))
    return false;
  std::atomic_thread_fence(std::memory_order_seq_cst);
  if (!box.signalled.load(std::memory_order_relaxed)
      && !box.signalled.exchange(true, std::memory_order_acq_rel))
    caf::anon_send(box.actor, wake_atom::value);
  return true;
}

/// The shard's side of `send`: clears the wake-up flag, then takes up to
/// `inbox_batch` items into `buf` (an item sent after the clear either is
/// taken here or wakes the shard again). Returns how many.
template <class Item>
size_t take(inbox<Item>& box, std::vector<Item>& buf) {
  box.signalled.store(false, std::memory_order_relaxed);
  std::atomic_thread_fence(std::memory_order_seq_cst);
  return box.items.try_dequeue_bulk(buf.data(), inbox_batch);
}

/// The shard with the least queued (the first of equals): where a
/// starting lane goes, as keylane places one.
template <class Item>
uint32_t by_load(std::vector<inbox<Item>>& boxes) {
  uint32_t best = 0;
  auto least = boxes[0].items.size_approx();
  for (uint32_t i = 1; i < boxes.size(); ++i)
    if (auto n = boxes[i].items.size_approx(); n < least) {
      least = n;
      best = i;
    }
  return best;
}

/// CAF on the sharing scheduler with `threads` workers, quiet.
inline void configure(caf::actor_system_config& cfg, int threads) {
  cfg.set("logger.verbosity", caf::atom("quiet"));
  cfg.set("scheduler.policy", caf::atom("sharing"));
  cfg.set("scheduler.max-threads", static_cast<size_t>(threads));
  cfg.set("scheduler.max-throughput", size_t{300});
}

} // namespace keylane::bench::caf_lanes_parts
