// SPDX-License-Identifier: Apache-2.0
#include "keylane/config_loader.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <functional>
#include <limits>
#include <memory>
#include <optional>
#include <sstream>
#include <tuple>
#include <utility>
#include <vector>

#include <toml++/toml.h>

#include "config_checker.hpp"
#include "config_guard.hpp"
#include "config_reader.hpp"
#include "config_schema.hpp"
#include "keylane/detail/toml_text.hpp"
#include "keylane/errc.hpp"

namespace keylane {

namespace {

using detail::checker;
using detail::combination;
using detail::combinations;
using detail::entry;
using detail::field;
using detail::schema;
using detail::section;
using detail::to_param;
using detail::toml_key;
using detail::toml_quoted;
using detail::toml_value;

/// "known keys: runtime, scheduler, ..., handler", the top-level tables.
std::string known_sections() {
  std::string out = "known keys: ";
  for (const auto& sec : schema())
    out += std::string{sec.name} + ", ";
  return out + "handler";
}

/// "known keys: a, b, c" of the table `name` (a section or "handler").
std::string known_keys(std::string_view name) {
  if (name == "handler")
    return "known keys: name, and the table [handler.<name>]";
  std::string out;
  for (const auto& sec : schema())
    if (name == sec.name)
      for (const auto& f : sec.fields)
        out += (out.empty() ? "" : ", ") + std::string{f.name};
  return "known keys: " + out;
}

void read_section(checker& c, const entry& e, const section& sec,
                  settings& s) {
  auto tbl = e.value.as_table();
  if (!tbl) {
    c.invalid(e, "must be a table ([" + e.path + "])");
    return;
  }
  for (const auto& [key, value] : *tbl) {
    entry sub{key, value, e.path + '.' + toml_key(key.str())};
    auto is_key = [name = key.str()](const field& f) { return name == f.name; };
    auto i = std::find_if(sec.fields.begin(), sec.fields.end(), is_key);
    if (i != sec.fields.end()) {
      i->read(c, sub, s);
      continue;
    }
    c.unknown(sub, known_keys(sec.name));
  }
}

// Fills `s.params` from `[handler.<name>]`; any scalar is allowed, since only
// the handler knows its keys (it reports the ones it does not read).
void read_params(checker& c, const entry& e, settings& s) {
  auto tbl = e.value.as_table();
  if (!tbl) {
    c.invalid(e, "must be a table ([" + e.path + "]) of the handler's keys");
    return;
  }
  for (const auto& [key, value] : *tbl) {
    entry sub{key, value, e.path + '.' + toml_key(key.str())};
    if (auto x = to_param(value))
      s.params.set(std::string{key.str()}, std::move(*x), c.where(key));
    else
      c.invalid(sub, "must be a bool, integer, float or string");
  }
}

void read_handler(checker& c, const entry& e, settings& s) {
  auto tbl = e.value.as_table();
  if (!tbl) {
    c.invalid(e, "must be a table ([handler])");
    return;
  }
  // The name decides which sub-table is allowed, so it goes first.
  auto name = tbl->find("name");
  if (name != tbl->end()) {
    entry sub{name->first, name->second, "handler.name"};
    auto str = sub.value.as_string();
    if (str && !str->get().empty()) {
      // Params belong to one handler: naming another (an override) drops
      // them.
      if (s.handler != str->get())
        s.params = handler_params{};
      s.handler = str->get();
    } else
      c.invalid(sub, "must be a non-empty string naming a registered handler");
  }
  for (const auto& [key, value] : *tbl) {
    if (key == "name")
      continue;
    entry sub{key, value, "handler." + toml_key(key.str())};
    if (!s.handler.empty() && key == s.handler)
      read_params(c, sub, s);
    else if (!s.handler.empty() && value.is_table())
      c.unknown(sub, "only [handler." + toml_key(s.handler)
                       + "], the table of handler.name, is allowed");
    else if (name == tbl->end() && value.is_table())
      c.unknown(sub, "set handler.name = " + toml_quoted(key.str())
                       + " to configure this handler, or remove the table");
    else if (!value.is_table())
      c.unknown(sub, known_keys("handler"));
    // Else handler.name is invalid, which is reported already.
  }
}

void check_combinations(checker& c, const toml::table& root,
                        const settings& s) {
  for (const auto& rule : combinations()) {
    auto why = rule.why(s);
    auto sec = root.find(rule.section);
    if (why.empty() || sec == root.end() || !sec->second.is_table())
      continue;
    auto& tbl = *sec->second.as_table();
    auto at = tbl.find(rule.key);
    if (at != tbl.end())
      c.invalid(entry{at->first, at->second,
                      std::string{rule.section} + '.' + rule.key},
                why);
  }
}

void read_document(checker& c, const toml::table& root, settings& s) {
  for (const auto& [key, value] : root) {
    entry e{key, value, toml_key(key.str())};
    auto is_key = [name = key.str()](const section& x) {
      return name == x.name;
    };
    auto i = std::find_if(schema().begin(), schema().end(), is_key);
    if (i != schema().end())
      read_section(c, e, *i, s);
    else if (key == "handler")
      read_handler(c, e, s);
    else
      c.unknown(e, known_sections());
  }
}

caf::error syntax_error(std::string_view origin, const toml::parse_error& e) {
  const auto& at = e.source().begin;
  auto msg = std::string{origin};
  if (at.line > 0)
    msg += ':' + std::to_string(at.line) + ':' + std::to_string(at.column);
  msg += ": parse error: ";
  msg += e.description();
  return make_error(errc::invalid_config, std::move(msg));
}

/// Parses TOML text `origin` names; a syntax error goes to `err`.
std::optional<toml::table> parse_table(std::string_view text,
                                       std::string_view origin,
                                       caf::error& err) {
  if (auto bad = check_toml_text(text, origin)) {
    err = std::move(bad);
    return std::nullopt;
  }
#if TOML_EXCEPTIONS
  try {
    return toml::parse(text, origin);
  } catch (const toml::parse_error& e) {
    err = syntax_error(origin, e);
    return std::nullopt;
  }
#else
  auto res = toml::parse(text, origin);
  if (res)
    return std::move(res).table();
  err = syntax_error(origin, res.error());
  return std::nullopt;
#endif
}

struct file_closer {
  void operator()(std::FILE* f) const noexcept {
    std::fclose(f);
  }
};

} // namespace

namespace detail {

std::string known_sections() {
  return keylane::known_sections();
}

std::string known_keys(std::string_view table) {
  return keylane::known_keys(table);
}

bool is_table_name(std::string_view name) {
  return name == "handler"
         || std::any_of(schema().begin(), schema().end(),
                        [name](const section& x) { return name == x.name; });
}

std::optional<toml::table> parse_table(std::string_view text,
                                       std::string_view origin,
                                       caf::error& err) {
  return keylane::parse_table(text, origin, err);
}

std::string read_override(const toml::table& doc, settings& s,
                          std::string_view assignment,
                          const std::string& path) {
  checker c{assignment, path};
  read_document(c, doc, s);
  return c.ok() ? std::string{} : c.report();
}

std::vector<std::pair<std::string, std::string>> flatten(const settings& s) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& sec : schema())
    for (const auto& f : sec.fields)
      out.emplace_back(std::string{sec.name} + '.' + f.name, f.write(s));
  out.emplace_back("handler.name", toml_quoted(s.handler));
  for (const auto& [key, value] : s.params.values())
    out.emplace_back("handler." + toml_key(s.handler) + '.' + toml_key(key),
                     toml_value(value));
  return out;
}

} // namespace detail

caf::expected<std::string> read_config_text(const std::string& path) {
  auto fail = [&path](int code) {
    return make_error(errc::unreadable_config,
                      path + ": cannot read file: "
                        + (code != 0 ? std::strerror(code) : "read error"));
  };
  std::unique_ptr<std::FILE, file_closer> f{std::fopen(path.c_str(), "rb")};
  if (!f)
    return fail(errno);
  // Read one byte past the limit, never more: a FIFO, /dev/zero or a /proc
  // file has no size that stat could tell in advance.
  std::string text;
  char buf[8192];
  size_t n = 0;
  while (text.size() <= max_config_bytes
         && (n = std::fread(buf, 1,
                            std::min(sizeof(buf),
                                     max_config_bytes + 1 - text.size()),
                            f.get()))
              > 0)
    text.append(buf, n);
  if (std::ferror(f.get()))
    return fail(errno); // a directory opens fine and fails here (EISDIR)
  if (text.size() > max_config_bytes)
    return make_error(errc::config_too_large,
                      path + ": larger than "
                        + std::to_string(max_config_bytes)
                        + " bytes (1 MiB), the most a config file may have");
  return text;
}

caf::expected<settings> load(const std::string& path) {
  auto text = read_config_text(path);
  if (!text)
    return std::move(text.error());
  return parse(*text, path);
}

caf::error check_toml_text(std::string_view text, std::string_view origin) {
  if (auto bad = detail::find_unsafe_text(text))
    return make_error(errc::invalid_config,
                      std::string{origin} + ':' + std::to_string(bad->line)
                        + ':' + std::to_string(bad->column)
                        + ": parse error: " + bad->what);
  return caf::none;
}

caf::expected<settings> parse(std::string_view text,
                              const std::string& origin) {
  caf::error err;
  auto root = parse_table(text, origin, err);
  if (!root)
    return err;
  // Fill a fresh struct and hand it out only if nothing was wrong.
  settings s;
  checker c{origin};
  read_document(c, *root, s);
  if (c.ok())
    check_combinations(c, *root, s);
  if (!c.ok())
    return make_error(errc::invalid_config, c.report());
  s.origin = origin;
  return s;
}

std::string to_toml(const settings& s) {
  std::ostringstream os;
  os << "# keylane settings from " << toml_quoted(s.origin) << '\n';
  for (const auto& sec : schema()) {
    os << "\n[" << sec.name << "]\n";
    for (const auto& f : sec.fields)
      os << f.name << " = " << f.write(s) << '\n';
  }
  // Parameters without a handler name have no table to live in.
  if (s.handler.empty())
    return os.str();
  os << "\n[handler]\n"
     << "name = " << toml_quoted(s.handler) << '\n';
  if (!s.params.values().empty()) {
    os << "\n[handler." << toml_key(s.handler) << "]\n";
    for (const auto& [key, value] : s.params.values())
      os << toml_key(key) << " = " << toml_value(value) << '\n';
  }
  return os.str();
}

} // namespace keylane
