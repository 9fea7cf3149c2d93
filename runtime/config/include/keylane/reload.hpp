// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "keylane/config.hpp"

namespace keylane {

/// One key whose value differs between two settings.
struct setting_change {
  /// Dotted key, "runtime.max_active_keys" or "handler.ledger.db_timeout_ms".
  std::string key;
  /// Old and new value, in TOML spelling ("" when absent).
  std::string before;
  std::string after;
};

/// What `runtime::reload` did.
struct reload_report {
  /// Keys changed in the running runtime.
  std::vector<setting_change> applied;
  /// Keys that differ but take effect only at the next start; the running
  /// runtime keeps its value.
  std::vector<setting_change> needs_restart;
};

/// True if `key` (dotted, as in the file) changes at run time through
/// `reload`: runtime.max_active_keys, runtime.window, runtime.window_max,
/// every retry key,
/// log.level, log.stall_ms and metrics.latency.
[[nodiscard]] bool reloads_at_run_time(std::string_view key) noexcept;

/// Every key whose value differs between `a` and `b`, in file order.
[[nodiscard]] std::vector<setting_change> differences(const settings& a,
                                                      const settings& b);

/// The line a runtime logs at start (info): where its settings came from
/// and every key whose value differs from `settings{}`, in file order, as
/// `settings (app.toml) differ from the defaults: runtime.lane_linger_ms =
/// 20, state.store = "memory"`; or `settings (<defaults>): all defaults`.
[[nodiscard]] std::string describe_non_defaults(const settings& s);

} // namespace keylane
