// SPDX-License-Identifier: Apache-2.0
#pragma once

// Command-line options of keylane_kafka_bench.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace keylane::bench::kafka {

/// Everything the command line sets.
struct options {
  bool quick = false;
  bool json = false;
  bool help = false;
  int runs = 3;
  /// Records per topic (one topic per key count).
  size_t records = 10000;
  /// Handler time per record: 0 to this, in microseconds, asynchronous.
  int64_t max_delay_us = 5000;
  int partitions = 12;
  /// Most records in flight at once in the keylane ways
  /// (runtime.max_active_keys).
  size_t concurrency = 100;
  /// Ways to run, in order (default: all).
  std::vector<std::string> ways;
};

/// Every way's name, in the order they run.
[[nodiscard]] const std::vector<std::string>& way_names();

/// Parses `argv`; on a mistake returns nothing and sets `error`.
[[nodiscard]] std::optional<options> parse_args(int argc, char** argv,
                                                std::string& error);

/// The --help text.
[[nodiscard]] std::string usage(const char* argv0);

} // namespace keylane::bench::kafka
