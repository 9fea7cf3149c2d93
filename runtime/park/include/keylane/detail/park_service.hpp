// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include <caf/expected.hpp>

#include "keylane/config.hpp"
#include "keylane/detail/event_base.hpp"
#include "keylane/detail/payload_ops.hpp"
#include "keylane/park_store.hpp"

namespace keylane::detail {

/// The park store behind `park.store`, and the writing of parked events
/// to it: what lanes and the supervisor call when a key's retries run out
/// or a replay ends.
///
/// Thread-safety: the store serialises its own calls; `park` and
/// `unpark_through` may run on any actor's thread. A key's events reach
/// `park` from one actor at a time (its lane or the supervisor), in
/// submission order, so the store keeps each key's records in order.
class park_service {
public:
  /// Opens the store `cfg` names, checking that `ops` can park its
  /// payloads (with `park = none`, `store()` is null).
  static caf::expected<std::unique_ptr<park_service>>
  open(const settings& cfg, const payload_ops& ops);

  /// Moves `evs` (each key's in submission order) to the store in one
  /// transaction and marks them `parked`; each one's `error` holds its
  /// reason. Events revived by a replay are in the store already: only
  /// their records' failure details are updated. If the store refuses,
  /// they end `failed` with the store's error instead: accounted for,
  /// never lost silently.
  void park(event_ptr* evs, size_t n);

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
               bool durable);

  std::unique_ptr<park_store> store_;
  const payload_ops& ops_;
  bool durable_;
};

} // namespace keylane::detail
