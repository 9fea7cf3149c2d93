// SPDX-License-Identifier: Apache-2.0
#pragma once

// The pipeline example's command line.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace pipeline_example {

/// Everything the command line sets.
struct options {
  bool json = false;
  /// Fewer items and shorter calls, for the smoke test.
  bool quick = false;
  /// Items; 0: 1,000 (300 with --quick).
  uint64_t items = 0;
  uint64_t seed = 7;
  std::optional<std::string> config;
  std::vector<std::string> overrides;
  /// `--print-config`: print the effective settings and exit.
  bool print_config = false;
};

/// Parses `argv`; prints the help and exits 0 for `--help`, prints the
/// mistake and exits 2 for a bad argument.
[[nodiscard]] options parse_args(int argc, char** argv);

} // namespace pipeline_example
