// SPDX-License-Identifier: Apache-2.0
#pragma once

// The export's settings: the base built into the program (equal to
// ordered_export.toml), read from --config and --set, and each mode's keys
// applied on top.

#include <optional>
#include <string>
#include <vector>

#include <caf/expected.hpp>

#include <keylane/config.hpp>

#include "modes.hpp"

namespace ordered_export {

/// The base defaults: max_active_keys = 8 ("8 in flight"), the sharing
/// scheduler on 2 threads, handler "ordered_export".
[[nodiscard]] keylane::settings default_settings();

/// Where the base settings come from: the defaults or the `--config` file,
/// then the `--set` overrides.
struct settings_source {
  std::optional<std::string> config;
  std::vector<std::string> overrides;
};

/// Reads the base settings of `src` into `out` (unchanged on error) and
/// returns what is wrong with them, one message each; empty when fine.
[[nodiscard]] std::vector<std::string> read_settings(const settings_source& src,
                                                     keylane::settings& out);

/// `base` with the keys of `m` applied, validated as `--set` is.
[[nodiscard]] caf::expected<keylane::settings>
mode_settings(const keylane::settings& base, const mode& m);

} // namespace ordered_export
