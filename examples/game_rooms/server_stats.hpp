// SPDX-License-Identifier: Apache-2.0
#pragma once

// The server's counters, printed as one JSON object when it stops (the
// bots embed it in their report).

#include <atomic>
#include <cstdint>
#include <string>

namespace game {

/// Counters of one server run. Thread-safety: relaxed atomics.
struct server_stats {
  std::atomic<uint64_t> connections{0};
  std::atomic<uint64_t> pages_served{0};
  std::atomic<uint64_t> joins{0};
  std::atomic<uint64_t> rooms_full{0};
  std::atomic<uint64_t> unknown_room{0};
  std::atomic<uint64_t> bad_frames{0};
  std::atomic<uint64_t> oversized{0};
  std::atomic<uint64_t> slow_dropped{0};
  std::atomic<uint64_t> busy{0};
  std::atomic<uint64_t> transfers{0};
  std::atomic<uint64_t> transfers_refused{0};
  std::atomic<uint64_t> transfer_retries{0};
  std::atomic<uint64_t> leave_retries{0};
  std::atomic<uint64_t> ticks_rejected{0};
  std::atomic<uint64_t> ticks_late{0};
  std::atomic<uint64_t> ticks_skipped{0};
  std::atomic<uint64_t> occupied_retired{0};
  // keylane's worker threads (0 under `--rooms-on single_loop`) and the
  // network threads: what the server chose when not told.
  std::atomic<uint64_t> keylane_threads{0};
  std::atomic<uint64_t> io_threads{0};

  /// The counters as one JSON object.
  [[nodiscard]] std::string json() const;
};

} // namespace game
