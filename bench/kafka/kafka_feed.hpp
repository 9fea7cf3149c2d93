// SPDX-License-Identifier: Apache-2.0
#pragma once

// The benchmark's input: one topic per key count on the mock cluster,
// filled once before any way runs.

#include <cstddef>
#include <cstdint>
#include <string>

namespace keylane::kafka {
class mock_cluster;
} // namespace keylane::kafka

namespace keylane::bench::kafka {

/// One topic of `records` records over `keys` keys.
///
/// Record i has a key "k<j>" (j uniform in [0, keys), seeded), lives in
/// partition j mod `partitions` (so partitions are balanced and a key's
/// records share one), and carries the value "<j>:<n>:<delay_us>" (its
/// key's n-th record; the handler time drawn for it, uniform in
/// [0, max_delay_us]) and the headers "part" (its partition) and "id" (i),
/// which the partition-order and unordered ways key by.
struct workload {
  std::string topic;
  std::string name;
  size_t keys = 0;
  size_t records = 0;
  int partitions = 0;
  int64_t max_delay_us = 0;
};

/// A workload with its topic and row name ("<records>_records_<keys>_keys").
[[nodiscard]] workload make_workload(size_t keys, size_t records,
                                     int partitions, int64_t max_delay_us);

/// Creates the topic and produces every record; an error text or "".
[[nodiscard]] std::string fill(keylane::kafka::mock_cluster& cluster,
                               const workload& w);

/// Reads "<j>:<n>:<delay_us>"; false on anything else.
bool parse_value(const char* data, size_t size, uint64_t& key, uint64_t& n,
                 int64_t& delay_us);

} // namespace keylane::bench::kafka
