// SPDX-License-Identifier: Apache-2.0
#pragma once

// What the keyed-state tests (exactly_once_test.cpp, changelog_test.cpp)
// compare: per key, the totals that were produced and those a store or a
// changelog topic holds, decoded from keylane's state records.

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include <catch2/catch.hpp>

#include "keylane/codec.hpp"
#include "keylane/detail/state_record.hpp"
#include "keylane/errc.hpp"
#include "keylane/state_store.hpp"
#include "state_totals.hpp"

namespace kafka_test {

/// What one key's state must be at the end, or what a store holds.
struct key_totals {
  totals state;
  uint64_t events = 0; // the record's own count of applied events
};

using totals_by_key = std::map<std::string, key_totals>;

/// Decodes one state record into `out[k]`; a line in `bad` if it fails.
inline void decode_into(totals_by_key& out, const std::string& k,
                        std::string_view bytes,
                        std::vector<std::string>& bad) {
  auto rec = keylane::detail::decode_state_record(bytes);
  if (!rec) {
    bad.push_back(k + ": " + keylane::render(rec.error()));
    return;
  }
  auto x = keylane::codec<totals>::decode(rec->state);
  if (!x) {
    bad.push_back(k + ": " + keylane::render(x.error()));
    return;
  }
  out[k] = key_totals{*x, rec->events};
}

/// Every key's totals in the RocksDB store at `path`, opened read-only.
inline totals_by_key read_store(const std::string& path) {
  totals_by_key out;
  auto st = keylane::open_rocksdb_state_store(path, true);
  REQUIRE(st);
  std::vector<std::string> bad;
  auto err = (*st)->scan([&](const keylane::key& k, std::string_view bytes) {
    decode_into(out, k.to_string(), bytes, bad);
    return true;
  });
  REQUIRE(!err);
  for (const auto& line : bad)
    UNSCOPED_INFO(line);
  REQUIRE(bad.empty());
  return out;
}

/// One line per key whose totals differ from what was produced.
inline std::vector<std::string> mismatches(const totals_by_key& want,
                                           const totals_by_key& got) {
  std::vector<std::string> out;
  for (const auto& [k, w] : want) {
    auto i = got.find(k);
    if (i == got.end()) {
      out.push_back(k + ": no state stored");
      continue;
    }
    const auto& g = i->second;
    if (g.state.sum != w.state.sum || g.state.count != w.state.count
        || g.events != static_cast<uint64_t>(w.state.count))
      out.push_back(k + ": sum " + std::to_string(g.state.sum) + " (want "
                    + std::to_string(w.state.sum) + "), count "
                    + std::to_string(g.state.count) + " (want "
                    + std::to_string(w.state.count) + "), events "
                    + std::to_string(g.events));
  }
  for (const auto& [k, g] : got)
    if (!want.count(k))
      out.push_back(k + ": stored but never produced");
  return out;
}

/// The records applied over all keys.
inline int64_t total_count(const totals_by_key& m) {
  int64_t n = 0;
  for (const auto& [k, t] : m)
    n += t.state.count;
  return n;
}

} // namespace kafka_test
