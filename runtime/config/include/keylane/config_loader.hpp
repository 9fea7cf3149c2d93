// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include <caf/error.hpp>
#include <caf/expected.hpp>

#include "keylane/config.hpp"

namespace keylane {

/// The largest config file `load` reads, in bytes (1 MiB): a file, FIFO or
/// device that has more is refused with `errc::config_too_large` after
/// reading one byte past it, so `/dev/zero` costs 1 MiB, not all memory.
inline constexpr size_t max_config_bytes = size_t{1} << 20;

/// The most problems a config error lists, in file order; a last line
/// "and N more problems" counts the rest.
inline constexpr size_t max_config_problems = 50;

/// Reads and validates a TOML config file. Any unknown key, wrong type,
/// out-of-range value, unreadable or malformed file yields an
/// `errc::invalid_config` (or `errc::unreadable_config`, or
/// `errc::config_too_large` past `max_config_bytes`) error whose message
/// names file, line and key, for example
/// `ledger.toml:12: runtime.window = -4: must be >= 1 (or "unbounded" or "auto")`.
[[nodiscard]] caf::expected<settings> load(const std::string& path);

/// Reads a config file's text as `load` does, without parsing it: at most
/// `max_config_bytes` (`errc::config_too_large` past it,
/// `errc::unreadable_config` if it cannot be read). For programs that read
/// tables of their own from the same file.
[[nodiscard]] caf::expected<std::string> read_config_text(const std::string& path);

/// Refuses TOML text that Debian's toml++ 3.3.0 cannot parse safely: a
/// non-ASCII character outside a string or comment, or where toml++ tests
/// it for whitespace (it reaches undefined behaviour there). `parse`,
/// `load` and `apply_override` check this themselves; call it before
/// handing text to toml++ directly. The error names `origin`, line and column.
[[nodiscard]] caf::error check_toml_text(std::string_view text,
                                         std::string_view origin);

/// Parses TOML text; `origin` names it in messages (a file path, usually).
[[nodiscard]] caf::expected<settings> parse(std::string_view text,
                                            const std::string& origin);

/// Applies one command-line override "section.key=value" to `s`, validated
/// exactly like the same key in a file; `s` is unchanged on error. The value
/// is TOML (`runtime.window=4096`, `runtime.order="per_key"`), and a bare
/// word that is not TOML is a string (`runtime.order=per_key`,
/// `park.path=/tmp/x.db`). `handler.<name>.<key>` sets a parameter of the
/// handler that `handler.name` names; naming another handler drops the
/// parameters of the previous one. Errors are `errc::invalid_config` and
/// name the override, for example
/// `--set runtime.window=-4: must be >= 1 (or "unbounded" or "auto")`. On success,
/// `s.origin` gains " + --set" ("ledger.toml + --set").
[[nodiscard]] caf::error apply_override(settings& s,
                                        std::string_view assignment);

/// Applies several overrides, in order (a later one wins), as
/// `apply_override` does, then checks the rules that tie keys together
/// (`park.store = "sqlite"` needs `park.path`). Reports every problem at
/// once, one line each, and changes nothing on error.
[[nodiscard]] caf::error
apply_overrides(settings& s, const std::vector<std::string>& assignments);

/// Renders settings as TOML that `parse` accepts and that yields them again.
[[nodiscard]] std::string to_toml(const settings& s);

} // namespace keylane
