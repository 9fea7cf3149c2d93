// SPDX-License-Identifier: Apache-2.0
// Command-line overrides, "section.key=value": each one is read by the
// file's reader (config_loader.cpp), so it meets the same rules and
// messages as the same key in a file.

#include <algorithm>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "config_reader.hpp"
#include "keylane/config_loader.hpp"
#include "keylane/detail/toml_text.hpp"
#include "keylane/errc.hpp"

namespace keylane {

namespace {

using namespace detail;


std::string_view trim(std::string_view s) {
  auto first = s.find_first_not_of(" \t");
  if (first == std::string_view::npos)
    return {};
  return s.substr(first, s.find_last_not_of(" \t") - first + 1);
}

/// The dotted key a document of one key names ("runtime.window"); for an
/// inline table, the key of the table ("park" of `park = {...}`). Stops at
/// a table of no key or of several, so any document is safe to pass.
std::string key_path(const toml::table& doc) {
  std::string out;
  for (auto t = &doc; t != nullptr && t->size() == 1;) {
    auto only = t->begin(); // a named iterator: its pair is a proxy in it
    out += (out.empty() ? "" : ".") + toml_key(only->first.str());
    t = only->second.as_table();
  }
  return out;
}

/// True if changing `path` may change the dotted key `key`.
bool touches(const std::string& path, const std::string& key) {
  return key == path || key.rfind(path + '.', 0) == 0;
}

/// Applies "section.key=value" to `s` and sets `path` to the key it names;
/// returns its problems, or "" (then `s` may be partly changed).
std::string apply_one(settings& s, std::string_view assignment,
                      std::string& path) {
  auto origin = "--set " + std::string{assignment};
  auto how = " (write section.key=value, for example runtime.window=4096; "
             + known_sections() + ")";
  auto eq = assignment.find('=');
  if (eq == std::string_view::npos)
    return origin + ": missing \"=\"" + how;
  auto key = trim(assignment.substr(0, eq));
  auto value = trim(assignment.substr(eq + 1));
  if (key.empty())
    return origin + ": missing the key before \"=\"" + how;
  // The value is TOML; a bare word that is not (per_key, /tmp/x.db) is a
  // string. One line each, so neither can smuggle in a second key.
  caf::error ignored;
  auto one_line = [](std::string_view x) {
    return x.find_first_of("\r\n") == std::string_view::npos;
  };
  auto literal = std::string{value};
  if (!one_line(value) || !parse_table("v = " + literal, origin, ignored))
    literal = toml_quoted(value);
  std::optional<toml::table> doc;
  if (one_line(key))
    doc = parse_table(std::string{key} + " = " + literal, origin, ignored);
  // A key that parses to no key at all ("#x", a comment) leaves an empty
  // document; everything below reads its one key.
  if (!doc || doc->size() != 1)
    return origin + ": " + toml_quoted(key) + " is not a key" + how;
  path = key_path(*doc);
  // "runtime=5" is a section without a key: say so instead of "must be a
  // table", which is the file's advice.
  auto top = doc->begin();
  if (!top->second.is_table() && is_table_name(top->first.str()))
    return origin + ": " + toml_key(top->first.str())
           + " is a table; name one of its keys ("
           + known_keys(top->first.str()) + ")";
  return read_override(*doc, s, assignment, path);
}

} // namespace

caf::error apply_override(settings& s, std::string_view assignment) {
  return apply_overrides(s, {std::string{assignment}});
}

caf::error apply_overrides(settings& s,
                           const std::vector<std::string>& assignments) {
  // Work on a copy and hand it out only if every override was fine.
  auto work = s;
  std::vector<std::string> paths(assignments.size());
  std::string problems;
  auto add = [&problems](const std::string& text) {
    if (!text.empty())
      problems += (problems.empty() ? "" : "\n") + text;
  };
  for (size_t i = 0; i < assignments.size(); ++i)
    add(apply_one(work, assignments[i], paths[i]));
  // As in a file, rules tying keys together count once every key is valid.
  auto each_key_valid = problems.empty();
  for (const auto& rule : combinations()) {
    auto why = rule.why(work);
    if (!each_key_valid || why.empty())
      continue;
    // Blame the last override that changed a key the rule reads; if none
    // did, `s` broke it already.
    auto at = work.origin + ": " + rule.section + '.' + rule.key;
    for (size_t i = assignments.size(); i-- > 0;)
      if (std::any_of(rule.reads.begin(), rule.reads.end(),
                      [&](const auto& key) { return touches(paths[i], key); })) {
        at = "--set " + assignments[i];
        break;
      }
    add(at + ": " + why);
  }
  if (!problems.empty())
    return make_error(errc::invalid_config, std::move(problems));
  const std::string mark = " + --set";
  auto marked = work.origin.size() >= mark.size()
                && work.origin.compare(work.origin.size() - mark.size(),
                                       mark.size(), mark)
                     == 0;
  if (!assignments.empty() && !marked)
    work.origin += mark;
  s = std::move(work);
  return caf::none;
}

} // namespace keylane
