// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include <caf/expected.hpp>

#include "keylane/config.hpp"
#include "keylane/kafka/source_settings.hpp"

namespace keylane::kafka {

/// The two halves of one config file: the runtime's tables and `[kafka]`.
struct config {
  /// Everything but `[kafka]`, read by `keylane::parse`.
  keylane::settings runtime;
  /// The `[kafka]` table (and `[kafka.properties]`).
  source_settings source;
};

/// Reads a config file that holds the runtime's tables and a `[kafka]`
/// table. `[kafka]` is checked here, strictly (unknown keys, types, ranges,
/// librdkafka property names), and the rest by `keylane::parse`, which sees
/// the file with the `[kafka]` lines blanked so its line numbers stay
/// right. Errors are `errc::invalid_config` (or `unreadable_config`) and
/// name file and line: `app.toml:12: kafka.commit_interval_ms = -4: must be
/// >= 1`. Every problem is reported, one line each.
[[nodiscard]] caf::expected<config> load(const std::string& path);

/// Parses TOML text as `load` does; `origin` names it in messages.
[[nodiscard]] caf::expected<config> parse(std::string_view text,
                                          const std::string& origin);

/// Applies command-line overrides "section.key=value", in order (a later
/// one wins): `kafka.<key>` (and `kafka.properties.<name>`,
/// `kafka.output_properties.<name>`) validated like the same key in
/// `[kafka]`, every other key by `keylane::apply_overrides`. The value is
/// TOML, or a bare word read as a string. Reports every problem at once,
/// one line each naming its override
/// (`--set kafka.commit_interval_ms=-4: kafka.commit_interval_ms = -4: must
/// be an integer >= 1`), and changes nothing on error.
[[nodiscard]] caf::error
apply_overrides(config& cfg, const std::vector<std::string>& assignments);

/// Returns `text` with the lines of `[kafka]` and `[kafka.*]` tables
/// replaced by empty lines (same line count), for `keylane::parse`. A
/// table runs from its header to the next table header.
[[nodiscard]] std::string without_kafka_tables(std::string_view text);

} // namespace keylane::kafka
