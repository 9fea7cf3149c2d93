// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <string>
#include <string_view>

#include "keylane/config.hpp"

namespace keylane::detail {

/// Spells `s` as a TOML basic string: quoted, with `"`, `\` and control
/// characters escaped. Used for config messages and `to_toml`.
inline std::string toml_quoted(std::string_view s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) {
      char esc[8];
      std::snprintf(esc, sizeof(esc), "\\u%04x", static_cast<unsigned>(c));
      out += esc;
    } else {
      out += c;
    }
  }
  out += '"';
  return out;
}

/// Spells `s` as a TOML key: bare when it may be, quoted otherwise.
inline std::string toml_key(std::string_view s) {
  auto bare = [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')
           || (c >= '0' && c <= '9') || c == '_' || c == '-';
  };
  if (!s.empty() && std::all_of(s.begin(), s.end(), bare))
    return std::string{s};
  return toml_quoted(s);
}

/// Spells `x` as a TOML float that reads back as the same double.
inline std::string toml_double(double x) {
  if (std::isnan(x))
    return "nan";
  char buf[64];
  auto res = std::to_chars(buf, buf + sizeof(buf), x); // shortest round trip
  std::string out(buf, res.ptr);
  // TOML needs a fraction or an exponent to see a float ("inf" has an 'n').
  if (out.find_first_of(".en") == std::string::npos)
    out += ".0";
  return out;
}

/// Spells a handler parameter as a TOML value.
inline std::string toml_value(const param_value& x) {
  struct visitor {
    std::string operator()(bool b) const {
      return b ? "true" : "false";
    }
    std::string operator()(int64_t i) const {
      return std::to_string(i);
    }
    std::string operator()(double d) const {
      return toml_double(d);
    }
    std::string operator()(const std::string& s) const {
      return toml_quoted(s);
    }
  };
  return std::visit(visitor{}, x);
}

} // namespace keylane::detail
