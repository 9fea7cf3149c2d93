// SPDX-License-Identifier: Apache-2.0
#pragma once

// kafka_ledger's command line.

#include <string>
#include <vector>

namespace kafka_ledger {

/// Everything the command line sets.
struct options {
  int consumers = 3;
  int events = 6000;
  int accounts = 60;
  bool kill = true;
  bool json = false;
  /// Internal: run as one consumer process.
  bool consume = false;
  std::string bootstrap;
  std::string config; // parse_args sets the shipped kafka_ledger.toml
  /// "section.key=value" overrides of the config file, in order.
  std::vector<std::string> sets;
  /// `--print-config`: print the effective runtime settings and exit.
  bool print_config = false;
};

/// Parses `argv`; prints the help and exits 0 on --help, prints the
/// mistake and exits 2 on a bad argument.
[[nodiscard]] options parse_args(int argc, char** argv);

} // namespace kafka_ledger
