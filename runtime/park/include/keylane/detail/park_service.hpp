// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include <caf/expected.hpp>

#include "keylane/config.hpp"
#include "keylane/detail/event_base.hpp"
#include "keylane/detail/payload_ops.hpp"
#include "keylane/park_store.hpp"

namespace keylane::detail {

class logger;

/// The park store behind `park.store`, and the writing of parked events
/// to it: what lanes and the supervisor call when a key's retries run out
/// or a replay ends.
///
/// Thread-safety: the store serialises its own calls; `park` and
/// `unpark_through` may run on any actor's thread. A key's events reach
/// `park` from one actor at a time (its lane or the supervisor), in
/// submission order, so the store keeps each key's records in order.
/// A store that refuses a write (a full or failing disk) is retried, on
/// the calling actor's thread, until it works or `interrupt` is called.
class park_service {
public:
  /// Opens the store `cfg` names, checking that `ops` can park its
  /// payloads (with `park = none`, `store()` is null).
  /// Store failures are logged to `log`.
  static caf::expected<std::unique_ptr<park_service>>
  open(const settings& cfg, const payload_ops& ops, logger& log);

  /// Moves `evs` (each key's in submission order) to the store in one
  /// transaction and marks them `parked`; each one's `error` holds its
  /// reason. Events revived by a replay are in the store already: only
  /// their records' failure details are updated. A payload that cannot be
  /// encoded ends its event `failed` with the codec's error instead. A
  /// store that refuses the write is tried again (one error line per
  /// failure streak, a warning when it works again) until it works; the
  /// events wait meanwhile, unmarked. Returns false, the events left
  /// unmarked and in no store, only when `interrupt` ended that wait: the
  /// caller hands them to the stop ledger.
  [[nodiscard]] bool park(event_ptr* evs, size_t n);

  /// Ends the waits of `park` for a store that refuses writes (`stop`).
  void interrupt();

  /// Parkings the store refused (each is tried again).
  [[nodiscard]] uint64_t write_failures() const noexcept {
    return write_failures_.load(std::memory_order_relaxed);
  }

  /// Records that replayed events of `k` up to store id `id` ended, so they
  /// leave the store.
  void unpark_through(const key& k, uint64_t id);

  /// The store, or null for `park = none`.
  [[nodiscard]] park_store* store() noexcept { return store_.get(); }

  /// The payload operations that park and revive events.
  [[nodiscard]] const payload_ops& ops() const noexcept { return ops_; }

  /// True if the store outlives the process (`park = sqlite`).
  [[nodiscard]] bool durable() const noexcept { return durable_; }

private:
  park_service(std::unique_ptr<park_store> st, const payload_ops& ops,
               bool durable, logger& log);
  caf::expected<std::vector<uint64_t>>
  append(const std::vector<parked_record>& recs);

  std::unique_ptr<park_store> store_;
  const payload_ops& ops_;
  bool durable_;
  logger& log_;
  std::mutex mtx_; // one retrying writer at a time; guards the streak
  std::condition_variable cv_;
  bool interrupted_ = false;
  uint64_t streak_tries_ = 0;
  std::atomic<uint64_t> write_failures_{0};
};

} // namespace keylane::detail
