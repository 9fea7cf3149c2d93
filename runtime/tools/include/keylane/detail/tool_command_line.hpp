// SPDX-License-Identifier: Apache-2.0
#pragma once

// The operator tools' command line (keylane-park, keylane-state):
//
//   PROG COMMAND TARGET [KEY] [--int-key]
//   PROG COMMAND [KEY] [--int-key] --config APP.toml [--set K=V]...
//
// parsed once here for both, on CLI11 (kept out of this header, so the
// installed headers do not need it).

#include <optional>
#include <string>
#include <vector>

#include "keylane/config.hpp"
#include "keylane/key.hpp"

namespace keylane::detail {

/// What one tool's command line looks like.
struct tool_grammar {
  /// The program's name, for "(see 'PROG --help')".
  std::string prog;
  /// What the store argument is called: "FILE" or "DIR".
  std::string target;
  /// The command that removes a key's records: "discard" or "erase".
  std::string remove;
};

/// A parsed command line.
struct tool_command_line {
  /// -h or --help: print the help, nothing else is checked.
  bool help = false;
  /// --print-config: print the settings --config and --set give, as TOML;
  /// no command or store is checked.
  bool print_config = false;
  /// list, show, export or the grammar's `remove`.
  std::string command;
  /// FILE or DIR; empty when it comes from the settings.
  std::string target;
  /// KEY, when given.
  std::optional<key> k;
  /// --config PATH.
  std::optional<std::string> config;
  /// --set SECTION.KEY=VALUE, in order.
  std::vector<std::string> sets;

  /// True when the store comes from --config or --set, not TARGET.
  [[nodiscard]] bool from_settings() const noexcept {
    return config || !sets.empty();
  }
};

/// Parses `argv` into `out`; on wrong usage the message to print (ending
/// with the hint to --help), for exit status 2.
[[nodiscard]] std::optional<std::string>
parse_tool_command_line(int argc, char** argv, const tool_grammar& grammar,
                        tool_command_line& out);

/// The settings --config and --set give (the defaults, without them), or
/// what is wrong with them and the exit status for it.
struct tool_settings {
  settings s;
  int status = 0; // 1: the config file; 2: a --set (wrong usage)
  std::string error;
};
[[nodiscard]] tool_settings settings_of(const tool_command_line& cl);

} // namespace keylane::detail
