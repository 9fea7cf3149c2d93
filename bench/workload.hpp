// SPDX-License-Identifier: Apache-2.0
#pragma once

// Pre-generated key sequences: the same events for every way.

#include <cstdint>
#include <string>
#include <vector>

#include "item.hpp"

namespace keylane::bench {

/// A key distribution, generated once with a fixed seed so every way and
/// every run sees the same sequence.
struct workload {
  /// Name as in the report: uniform_10k, zipf_100k, hot_key, new_keys.
  std::string name;
  /// One line for the report.
  std::string description;
  /// Keys are in [0, key_space).
  uint64_t key_space = 0;
  /// The events in submission order, with per-key indices filled in.
  std::vector<item> events;
};

/// Names of the workloads a run takes by default, in report order.
[[nodiscard]] const std::vector<std::string>& workload_names();

/// Workloads run only when named: uniform over so few keys that every
/// key's lane stays live under the benchmark's cap (the path of a live
/// lane, with no activation in it).
[[nodiscard]] const std::vector<std::string>& on_request_workload_names();

/// Generates workload `name` with `n` events; throws std::invalid_argument
/// for an unknown name.
[[nodiscard]] workload make_workload(const std::string& name, size_t n);

} // namespace keylane::bench
