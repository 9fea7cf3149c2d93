// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "keylane/detail/event_base.hpp"
#include "keylane/state_store.hpp"

namespace keylane::detail {

/// One shard's state writes from one round: each key's record, the
/// events whose changes these records (or, for events whose key has no
/// state, nothing) make durable, the messages these records keep (sent
/// once written), and the kept messages whose targets' records here hold
/// them (their senders may forget them once written).
struct state_round {
  std::vector<state_entry> writes;
  std::vector<uint64_t> seqs;
  std::vector<event_ptr> sends;
  std::vector<std::pair<keylane::key, uint64_t>> delivered;
  [[nodiscard]] bool empty() const noexcept {
    return writes.empty() && seqs.empty() && sends.empty()
           && delivered.empty();
  }
};

} // namespace keylane::detail
