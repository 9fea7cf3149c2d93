// SPDX-License-Identifier: Apache-2.0
#pragma once

// Reading the [kafka] table, key by key, for the file loader and the
// command-line overrides (private to keylane::kafka).

#include <algorithm>
#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include <toml++/toml.h>

#include "keylane/kafka/source_settings.hpp"

namespace keylane::kafka::detail {

/// A node as written in the file ("4", "\"x\"", "[...]").
[[nodiscard]] std::string describe(const toml::node& n);

/// Collects the problems of the `[kafka]` table, rendered in file order as
/// "origin:line: text" (without lines: "origin: text", for overrides).
class checker {
public:
  explicit checker(std::string origin, bool with_lines = true)
    : origin_(std::move(origin)), with_lines_(with_lines) {}

  /// Adds a problem found at `line` (0: none).
  void add(size_t line, std::string text) {
    problems_.push_back({line, std::move(text)});
  }

  /// Adds "path = <n as written>: why" at `n`'s line.
  void invalid(const toml::node& n, const std::string& path,
               const std::string& why) {
    add(n.source().begin.line, path + " = " + describe(n) + ": " + why);
  }

  /// True while no problem was added.
  [[nodiscard]] bool ok() const noexcept { return problems_.empty(); }

  /// Every problem, one a line, sorted by line.
  [[nodiscard]] std::string report() const {
    auto sorted = problems_;
    std::stable_sort(sorted.begin(), sorted.end(),
                     [](const auto& a, const auto& b) {
                       return a.first < b.first;
                     });
    std::string out;
    for (const auto& [line, text] : sorted) {
      if (!out.empty())
        out += '\n';
      out += origin_;
      if (with_lines_ && line > 0)
        out += ':' + std::to_string(line);
      out += ": " + text;
    }
    return out;
  }

private:
  std::string origin_;
  bool with_lines_;
  std::vector<std::pair<size_t, std::string>> problems_;
};

/// Reads `kafka.<key>` = `v` (given at `line`) into `s`, or adds a problem.
void read_kafka_key(checker& c, const std::string& key, const toml::node& v,
                    size_t line, source_settings& s);

} // namespace keylane::kafka::detail
