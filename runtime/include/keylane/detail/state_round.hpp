// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstdint>
#include <vector>

#include "keylane/state_store.hpp"

namespace keylane::detail {

/// One shard's state writes from one round: each key's record, and the
/// events whose changes these records (or, for events whose key has no
/// state, nothing) make durable.
struct state_round {
  std::vector<state_entry> writes;
  std::vector<uint64_t> seqs;
  [[nodiscard]] bool empty() const noexcept {
    return writes.empty() && seqs.empty();
  }
};

} // namespace keylane::detail
