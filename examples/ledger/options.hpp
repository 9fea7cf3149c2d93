// SPDX-License-Identifier: Apache-2.0
#pragma once

// The ledger's command line.

#include <cstdint>

#include "lane_settings.hpp"

namespace ledger {

/// Which scenario to run.
enum class scenario { hot, retry };

/// Everything the command line sets.
struct options {
  scenario which = scenario::hot;
  bool json = false;
  /// Stay up after the scenario until SIGINT or SIGTERM.
  bool serve = false;
  uint64_t seed = 42;
  /// `--config` and `--set`, read at start and on SIGHUP.
  settings_source settings;
  /// `--print-config`: print the effective settings and exit.
  bool print_config = false;
};

/// Parses `argv`; prints the help and exits 0 for `--help`, prints the
/// mistake and exits 2 for a bad argument.
[[nodiscard]] options parse_args(int argc, char** argv);

} // namespace ledger
