// SPDX-License-Identifier: Apache-2.0
#pragma once

// The ordered export's command line.

#include <cstdint>
#include <string>

#include "export_settings.hpp"

namespace ordered_export {

/// Everything the command line sets.
struct options {
  bool json = false;
  /// Fewer rows and shorter calls, for the smoke test.
  bool quick = false;
  /// Rows to export; 0: 1,000 (400 with --quick).
  uint64_t items = 0;
  uint64_t seed = 7;
  /// Stay up after the run until SIGINT or SIGTERM.
  bool serve = false;
  /// `--config` and `--set`: the base settings of every mode.
  settings_source settings;
  /// `--print-config`: print the effective base settings and exit.
  bool print_config = false;
};

/// Parses `argv`; prints the help and exits 0 for `--help`, prints the
/// mistake and exits 2 for a bad argument.
[[nodiscard]] options parse_args(int argc, char** argv);

} // namespace ordered_export
