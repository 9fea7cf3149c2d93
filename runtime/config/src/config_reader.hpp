// SPDX-License-Identifier: Apache-2.0
#pragma once

// What config_override.cpp and config_diff.cpp need of the file reader in
// config_loader.cpp: one schema, one set of messages, for files, `--set` and
// reload alike.

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <caf/error.hpp>
#include <toml++/toml.h>

#include "keylane/config.hpp"

namespace keylane::detail {

/// "known keys: runtime, scheduler, ..., handler", the top-level tables.
std::string known_sections();

/// "known keys: a, b, c" of the table `table` (a section or "handler").
std::string known_keys(std::string_view table);

/// True if `name` is a top-level table of the file.
bool is_table_name(std::string_view name);

/// Parses TOML text that `origin` names; a syntax error goes to `err`.
std::optional<toml::table> parse_table(std::string_view text,
                                       std::string_view origin,
                                       caf::error& err);

/// Reads the one-key document `doc` of the override `assignment` (naming
/// the dotted key `path`) into `s`; returns its problems, or "".
std::string read_override(const toml::table& doc, settings& s,
                          std::string_view assignment,
                          const std::string& path);

/// A rule that ties keys together, reported at the key that must change.
struct combination {
  /// The key reported, as section and key.
  const char* section;
  const char* key;
  /// The dotted keys whose values the rule reads.
  std::vector<std::string> reads;
  /// Why `s` breaks the rule, or "" when it holds.
  std::string (*why)(const settings& s);
};


/// Every rule that ties keys together.
const std::vector<combination>& combinations();

/// Every key of `s` as (dotted key, TOML value), in file order, the
/// handler's name and table last.
std::vector<std::pair<std::string, std::string>> flatten(const settings& s);

} // namespace keylane::detail
