// SPDX-License-Identifier: Apache-2.0
#pragma once

// The keylane way's settings: defaults built into the program (a config
// file next to the sources is not reachable from the build directory), the
// checks that make a bad `--config` fail before anything runs, and reading
// them from the command line's sources, at start and again on SIGHUP.

#include <optional>
#include <string>
#include <vector>

#include <keylane/config.hpp>

namespace ledger {

/// The handler name the ledger registers and its config must select.
inline constexpr const char* handler_name = "ledger";

/// The defaults, equal to ledger.toml: max_active_keys = 8, an unbounded
/// window, per-key order, the sharing scheduler on 2 threads, handler
/// "ledger".
[[nodiscard]] keylane::settings default_settings();

/// The defaults of the retry scenario, equal to retry.toml: the defaults
/// above plus up to 4 attempts per event with short backoffs (5 ms doubling
/// to at most 50 ms, full jitter) and parking in memory.
[[nodiscard]] keylane::settings retry_settings();

/// What is wrong with `cfg` for this program (wrong handler name, bad
/// `[handler.ledger]` values); empty when it is fine.
[[nodiscard]] std::vector<std::string>
settings_problems(const keylane::settings& cfg);

/// Where the settings come from: the scenario's defaults or the `--config`
/// file, then the `--set` overrides, so the command line wins over the
/// file at start and at every reload alike.
struct settings_source {
  /// The retry scenario's defaults rather than the hot one's.
  bool retry = false;
  /// The `--config` file, if any.
  std::optional<std::string> config;
  /// The `--set` overrides, in command-line order.
  std::vector<std::string> overrides;
};

/// Reads the settings of `src` into `out` (unchanged on error) and returns
/// what is wrong with them, one message each (file:line or --set named);
/// empty when they are fine.
[[nodiscard]] std::vector<std::string> read_settings(const settings_source& src,
                                                     keylane::settings& out);

} // namespace ledger
