// SPDX-License-Identifier: Apache-2.0
#pragma once

// The commands of the state tool (state_tool.cpp parses the command line
// and opens the store; these read it and print). Private to the library.

#include <optional>
#include <ostream>
#include <string>

#include "keylane/key.hpp"
#include "keylane/state_store.hpp"
#include "keylane/state_tool.hpp"

namespace keylane::detail {

/// Exit status: done.
inline constexpr int tool_exit_ok = 0;
/// Exit status: the store is missing, not a store, unreadable or damaged.
inline constexpr int tool_exit_failed = 1;
/// Exit status: wrong usage.
inline constexpr int tool_exit_usage = 2;

/// A failure to report: exit status and message (without the program name).
struct tool_failure {
  int status;
  std::string message;
};

/// Where a command writes: results to `out`, one line per damaged record
/// to `err` (each starting with `prog`).
struct tool_output {
  std::ostream& out;
  std::ostream& err;
  std::string prog;
};

/// "integer key 7" or "string key \"7\"" (escaped for a terminal).
[[nodiscard]] std::string describe_key(const key& k);

/// `list DIR`: a table of every key's record.
[[nodiscard]] std::optional<tool_failure>
list_states(state_store& store, const std::string& dir, tool_output& io);

/// `show DIR KEY`: the key's record as one JSON object.
[[nodiscard]] std::optional<tool_failure>
show_state(state_store& store, const std::string& dir, const key& k,
           const state_renderer& render, tool_output& io);

/// `export DIR [KEY]`: JSON lines, one object per record.
[[nodiscard]] std::optional<tool_failure>
export_states(state_store& store, const std::string& dir,
              const std::optional<key>& only, const state_renderer& render,
              tool_output& io);

/// `erase DIR KEY`: removes the key's record.
[[nodiscard]] std::optional<tool_failure>
erase_state(state_store& store, const std::string& dir, const key& k,
            tool_output& io);

} // namespace keylane::detail
