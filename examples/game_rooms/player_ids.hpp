// SPDX-License-Identifier: Apache-2.0
#pragma once

// Where player ids come from. Rooms loaded from the state store keep the
// players of earlier runs until they see they are absent (room_logic's
// `forget_absent`), and a join whose id is already in the room is taken
// for that old player: so an id must never repeat, across runs too.
//
// An id is the wall-clock time of the join in microseconds times 1,000
// (the last three digits a counter for joins in one microsecond), or the
// previous id + 1 if that is larger. They grow within a run whatever the
// clock does; across runs they stay apart as long as the system clock is
// not set back, between two runs, past the end of the earlier one. Ids
// are above 2^53: text, not JavaScript numbers (page.cpp compares them
// as strings).

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>

namespace game {

/// The source of player ids of one server run.
///
/// Thread-safety: `next` may be called from any thread.
class player_ids {
public:
  using clock_fn = std::function<std::chrono::system_clock::time_point()>;

  /// Ids for a run that reads the time from `now` (the system clock by
  /// default; tests pass their own).
  explicit player_ids(clock_fn now = std::chrono::system_clock::now);

  /// A new id, never 0.
  [[nodiscard]] uint64_t next();

private:
  clock_fn now_;
  std::atomic<uint64_t> last_;
};

} // namespace game
