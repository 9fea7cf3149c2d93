#pragma once

#include <string>
#include <string_view>

#include <caf/expected.hpp>

#include "keylane/config.hpp"

namespace keylane {

/// Reads and validates a TOML config file. Any unknown key, wrong type,
/// out-of-range value, unreadable or malformed file yields an
/// `errc::invalid_config` (or `errc::unreadable_config`) error whose message
/// names file, line and key, for example
/// `ledger.toml:12: runtime.window = -4: must be >= 1 (or "unbounded")`.
[[nodiscard]] caf::expected<settings> load(const std::string& path);

/// Parses TOML text; `origin` names it in messages (a file path, usually).
[[nodiscard]] caf::expected<settings> parse(std::string_view text,
                                            const std::string& origin);

/// Renders settings as TOML that `parse` accepts and that yields them again.
[[nodiscard]] std::string to_toml(const settings& s);

} // namespace keylane
