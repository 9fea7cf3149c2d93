// SPDX-License-Identifier: Apache-2.0
#pragma once

// What a stop report must say of a run: every accepted event delivered or
// listed as unfinished, once.

#include <catch2/catch.hpp>

#include <cstdint>
#include <set>
#include <vector>

#include "keylane/stats.hpp"

namespace keylane::test {

/// Checks the owner's report `rep` against the sequence numbers a run
/// had accepted and its callback saw delivered.
inline void check_accounted(const stop_report& rep,
                            const std::set<uint64_t>& accepted,
                            const std::set<uint64_t>& delivered) {
  CHECK(rep.complete);
  CHECK(rep.accepted == accepted.size());
  CHECK(rep.delivered == delivered.size());
  std::set<uint64_t> listed;
  for (auto& u : rep.unfinished)
    CHECK(listed.insert(u.seq).second);
  std::vector<uint64_t> wrong;
  for (auto seq : accepted)
    if (delivered.count(seq) + listed.count(seq) != 1)
      wrong.push_back(seq);
  INFO(wrong.size() << " accepted events neither delivered nor listed, or "
                       "both"
                    << (wrong.empty() ? "" : "; the first: seq ")
                    << (wrong.empty() ? 0 : wrong.front()));
  CHECK(wrong.empty());
}

} // namespace keylane::test
