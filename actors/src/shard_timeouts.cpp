// SPDX-License-Identifier: Apache-2.0
// Attempt timeouts and retry backoffs: a shard keeps its lanes' deadlines
// in one heap and arms one CAF timer for the earliest, instead of a timer
// per asynchronous attempt or retry on CAF's clock thread.

#include "keylane/detail/shard.hpp"

#include <algorithm>
#include <functional>

#include <caf/all.hpp>

namespace keylane::detail {

void shard::arm_timeout(uint64_t lane, uint64_t token, clock::time_point at,
                        clock::time_point now) {
  arm_deadline(deadline{at, lane, token, false}, now);
}

void shard::arm_retry(uint64_t lane, uint64_t token, clock::time_point at,
                      clock::time_point now) {
  arm_deadline(deadline{at, lane, token, true}, now);
}

void shard::arm_deadline(deadline d, clock::time_point now) {
  timers_.heap.push_back(d);
  std::push_heap(timers_.heap.begin(), timers_.heap.end(), std::greater<>{});
  arm_timer(d.at, now);
}

// One CAF timer in force, for the earliest deadline; a later one waits for
// the sweep that timer triggers.
void shard::arm_timer(clock::time_point at, clock::time_point now) {
  if (timers_.armed && timers_.armed_at <= at)
    return;
  timers_.armed = true;
  timers_.armed_at = at;
  delayed_send(this, std::max<clock::duration>(at - now, clock::duration{0}),
               timeout_atom::value, ++timers_.generation);
}

void shard::sweep_timeouts() {
  auto now = clock::now();
  while (!timers_.heap.empty() && timers_.heap.front().at <= now) {
    std::pop_heap(timers_.heap.begin(), timers_.heap.end(), std::greater<>{});
    auto due = timers_.heap.back();
    timers_.heap.pop_back();
    auto* l = find(due.lane);
    if (!l)
      continue;
    if (due.retry) // stale tokens (the attempt ended) are ignored
      l->on_retry(due.token);
    else
      l->on_timeout(due.token);
  }
  if (timers_.heap.empty()) {
    if (timers_.heap.capacity() > 4096) // a burst pins no memory after it
      std::vector<deadline>{}.swap(timers_.heap);
    return;
  }
  arm_timer(timers_.heap.front().at, now);
}

} // namespace keylane::detail
