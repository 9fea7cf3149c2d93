// SPDX-License-Identifier: Apache-2.0
#pragma once

// The problem collector of the config reader: every problem of a document
// (a file or one `--set`) is gathered with its position, then reported at
// once in file order, the first `max_config_problems` of them and a count
// of the rest. Shared by config_loader.cpp and config_schema.cpp.

#include <algorithm>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include <toml++/toml.h>

#include "keylane/config.hpp"
#include "keylane/config_loader.hpp"
#include "keylane/detail/toml_text.hpp"

namespace keylane::detail {

inline std::optional<param_value> to_param(const toml::node& n) {
  if (auto v = n.as_boolean())
    return param_value{v->get()};
  if (auto v = n.as_integer())
    return param_value{v->get()};
  if (auto v = n.as_floating_point())
    return param_value{v->get()};
  if (auto v = n.as_string())
    return param_value{v->get()};
  return std::nullopt;
}

// The value in TOML spelling, short enough for a one-line message.
inline std::string describe(const toml::node& n) {
  if (auto p = to_param(n))
    return toml_value(*p);
  if (n.is_array())
    return "[...]";
  if (n.is_table())
    return "{...}";
  std::ostringstream os; // dates and times
  n.visit([&os](const auto& x) { os << x; });
  return os.str();
}

// -- collecting problems ------------------------------------------------------

/// One key of the document, its value and its dotted path ("runtime.window").
struct entry {
  const toml::key& key;
  const toml::node& value;
  std::string path;
};

/// Collects every problem of one document, then renders them in file order.
class checker {
public:
  /// Checks a file; problems read "origin:line: path = value: why".
  explicit checker(std::string origin) : origin_(std::move(origin)) {
  }

  /// Checks the one-key document of the override `assignment` of `path`;
  /// problems at that key read "--set assignment: why", since the
  /// assignment shows key and value already.
  checker(std::string_view assignment, std::string path)
    : origin_("--set " + std::string{assignment}),
      override_path_(std::move(path)),
      is_override_(true) {
  }

  /// Where `key` was written, kept with handler params for later messages.
  source_location where(const toml::key& key) const {
    return {origin_, is_override_ ? 0 : key.source().begin.line};
  }

  /// Reports "path = value: why".
  void invalid(const entry& e, const std::string& why) {
    if (is_override_ && e.path == override_path_)
      add(e, why);
    else
      add(e, e.path + " = " + describe(e.value) + ": " + why);
  }

  /// Reports "unknown key path (hint)".
  void unknown(const entry& e, const std::string& hint) {
    add(e, "unknown key " + e.path + " (" + hint + ")");
  }

  [[nodiscard]] bool ok() const noexcept {
    return problems_.empty();
  }

  /// The first `max_config_problems` problems, one "file:line: ..." line
  /// each, sorted by position, and a line counting the rest.
  [[nodiscard]] std::string report() const {
    auto sorted = problems_;
    keep_first(sorted);
    std::string out;
    for (const auto& p : sorted) {
      if (!out.empty())
        out += '\n';
      out += origin_;
      if (p.line > 0)
        out += ':' + std::to_string(p.line);
      out += ": " + p.text;
    }
    if (auto more = count_ - sorted.size(); more > 0)
      out += '\n' + origin_ + ": and " + std::to_string(more) + " more problem"
             + (more == 1 ? "" : "s");
    return out;
  }

private:
  struct problem {
    size_t line;
    size_t column;
    size_t seq; // ties at one position keep the order they were found in
    std::string text;
  };

  // Sorts `ps` by position and drops all but the first max_config_problems.
  static void keep_first(std::vector<problem>& ps) {
    std::sort(ps.begin(), ps.end(), [](const problem& a, const problem& b) {
      return std::tie(a.line, a.column, a.seq)
             < std::tie(b.line, b.column, b.seq);
    });
    if (ps.size() > max_config_problems)
      ps.resize(max_config_problems);
  }

  void add(const entry& e, std::string text) {
    const auto& at = e.key.source().begin;
    // An override is one line of our making: its position means nothing.
    problems_.push_back(problem{is_override_ ? 0 : at.line, at.column, count_++,
                                std::move(text)});
    // toml++ hands keys over by name, not position, so the first problems
    // of the file may come last: keep a bounded set of the earliest.
    if (problems_.size() >= 2 * max_config_problems)
      keep_first(problems_);
  }

  std::string origin_;
  std::string override_path_;
  bool is_override_ = false;
  size_t count_ = 0;
  std::vector<problem> problems_;
};

} // namespace keylane::detail
