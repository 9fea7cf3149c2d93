// SPDX-License-Identifier: Apache-2.0
#pragma once

// The example programs' settings: built-in defaults, or the --config file
// instead, then the --set overrides on top.

#include <optional>
#include <string>
#include <vector>

#include <caf/expected.hpp>

#include <keylane/config.hpp>

namespace keylane::cli {

/// `defaults`, or the settings of `config` when given, with `overrides`
/// ("section.key=value", validated like the file) applied in order; the
/// error names file, line or override and says what is wrong.
[[nodiscard]] caf::expected<keylane::settings>
layered_settings(keylane::settings defaults,
                 const std::optional<std::string>& config,
                 const std::vector<std::string>& overrides);

/// `--print-config`: when `requested`, prints `s` as TOML on stdout (what
/// `keylane::to_toml` writes, which `--config` reads back) and exits 0.
void print_config_if(bool requested, const keylane::settings& s);

} // namespace keylane::cli
