#pragma once

// The keylane way's settings: defaults built into the program (a config
// file next to the sources is not reachable from the build directory), and
// the checks that make a bad `--config` fail before anything runs.

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

} // namespace ledger
