// SPDX-License-Identifier: Apache-2.0
#pragma once

// The exchange server's command line.

#include <optional>
#include <string>
#include <vector>

#include "fix/fix_gateway.hpp"
#include "matcher.hpp"

namespace exchange {

/// Everything the command line sets.
struct options {
  std::string matcher = "keylane"; ///< "keylane" or "single"
  int port = 0;                    ///< 0: the FIX settings file's port
  std::string fix_config;          ///< QuickFIX session settings
  size_t session_queue = 50000;    ///< reports held for a client that does not read
  gateway_limits fix_limits;       ///< what one FIX connection may cost
  std::optional<std::string> config; ///< keylane TOML
  std::vector<std::string> overrides;
  bool print_config = false;       ///< --print-config: print them, exit 0
  matcher_options books;
  std::string journal;
  std::string verify; ///< --verify FILE: check a journal and exit
  bool json = false;
};

/// Parses `argv`; prints the help and exits 0 for `--help`, prints the
/// mistake and exits 2 for a bad argument.
[[nodiscard]] options parse_args(int argc, char** argv);

} // namespace exchange
