// SPDX-License-Identifier: Apache-2.0
// Where an event is and what holds it, for the sink's stall log. The sink
// asks the supervisor, which answers for events it holds (being parked)
// or the key table holds (their key waits for a slot), and asks every
// shard; the lane holding the event answers the sink itself, through its
// shard. Runs only when output has
// stalled, so the scans cost nothing on the per-event path.

#include <string>

#include <caf/all.hpp>

#include "keylane/detail/key_table.hpp"
#include "keylane/detail/seconds_text.hpp"
#include "keylane/detail/lane.hpp"
#include "keylane/detail/shard.hpp"
#include "keylane/detail/supervisor.hpp"

namespace keylane::detail {

namespace {

int64_t since_epoch_ns(clock::time_point t) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
           t.time_since_epoch())
    .count();
}

} // namespace

std::string lane::doing() {
  if (!current_)
    return "idle";
  auto max = policy().max_attempts;
  auto of = " of " + std::to_string(max);
  if (backing_off_)
    return "backing off before attempt " + std::to_string(current_->attempts + 1)
           + of + " (last error: " + current_->error + ")";
  return "running attempt " + std::to_string(current_->attempts) + of
         + " for " + seconds_text(clock::now() - attempt_.started());
}

void lane::locate(uint64_t seq) {
  auto answer = [&](const event_base& ev, std::string where) {
    host_->located(seq, key_, std::move(where), since_epoch_ns(ev.submitted));
  };
  if (current_ && current_->seq == seq) {
    answer(*current_, "its lane is " + doing());
    return;
  }
  (void) queue_.find_if([&](const event_base& ev) {
    if (ev.seq != seq)
      return false;
    answer(ev, "it is queued in its lane behind seq "
                 + std::to_string(current_ ? current_->seq : 0)
                 + ", which is " + doing());
    return true;
  });
}

void supervisor::locate(uint64_t seq) {
  auto answer = [&](const event_base& ev, std::string where) {
    send(sink_, located_atom::value, seq, ev.k, std::move(where),
         since_epoch_ns(ev.submitted));
  };
  for (auto& ev : to_park_)
    if (ev->seq == seq) {
      answer(*ev, "its key is parked and it is being parked behind");
      return;
    }
  if (auto held = parts_.keys.find_held(seq)) {
    send(sink_, located_atom::value, seq, held->k,
         "its key waits for a lane slot (all " + std::to_string(parts_.keys.cap())
           + " in use, " + std::to_string(held->ahead) + " keys ahead)",
         since_epoch_ns(held->submitted));
    return;
  }
  // Not here: the lane holding it answers, if it is in a lane at all.
  for (auto& s : shards_)
    send(s, locate_atom::value, seq);
}

} // namespace keylane::detail
