// SPDX-License-Identifier: Apache-2.0
#pragma once

// A look at config text before toml++ sees it. Debian's toml++ 3.3.0 asks
// `is_non_ascii_horizontal_whitespace` of some characters, and for most
// code points in U+00A1..U+0499, U+2C5E..U+3057 and U+FB26..U+FEFE that
// function reaches `__builtin_unreachable()`: undefined behaviour, on text
// as plain as a Cyrillic "о" typed into `windоw = 4`. It asks wherever a
// character outside strings and comments may be whitespace; of every
// character of a value it scans ahead to guess the value's type (up to the
// next space, ']', '}', ',' or '#', quotes included); and in a multi-line
// basic string right after a backslash and at the first character a
// line-ending backslash continues with. TOML allows non-ASCII only inside
// strings and comments, so any outside, or in such a value run, is refused
// here (toml++ refuses it too, after the undefined behaviour); inside a
// multi-line basic string only the code points toml++ cannot answer for
// are refused.
//
// toml++ stops at the first error, so only the text up to its first error
// matters: this scanner follows TOML's strings and comments exactly as far
// as the text is valid, and where it is not, toml++ errors first.

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>
#include <string_view>

namespace keylane::detail {

/// A character of config text that toml++ must not see, and where.
struct unsafe_text {
  /// 1-based line and column (in code points, as toml++ counts).
  size_t line = 0;
  size_t column = 0;
  /// What is wrong, for "file:line:column: parse error: <what>".
  std::string what;
};

namespace guard {

/// The bytes of the UTF-8 sequence that `lead` begins (1 for ASCII).
inline size_t sequence_length(char lead) {
  auto b = static_cast<uint8_t>(lead);
  return b >= 0xf0 ? 4 : b >= 0xe0 ? 3 : b >= 0xc0 ? 2 : 1;
}

/// The code point at `text[i]`, or -1 for bytes that are not UTF-8.
inline int32_t code_point_at(std::string_view text, size_t i) {
  auto b = [&](size_t k) { return static_cast<uint8_t>(text[k]); };
  auto lead = b(i);
  size_t len = lead >= 0xf0 ? 4 : lead >= 0xe0 ? 3 : lead >= 0xc0 ? 2 : 0;
  if (lead < 0x80)
    return lead;
  if (len == 0 || lead > 0xf4 || i + len > text.size())
    return -1;
  int32_t cp = lead & (0x3f >> (len - 1));
  for (size_t k = 1; k < len; ++k) {
    if ((b(i + k) & 0xc0) != 0x80)
      return -1;
    cp = (cp << 6) | (b(i + k) & 0x3f);
  }
  return cp;
}

/// toml++ 3.3.0's `is_non_ascii_horizontal_whitespace`, made total: the
/// same answer where it has one, `std::nullopt` where it reaches
/// `__builtin_unreachable()`.
inline std::optional<bool> toml_horizontal_whitespace(int32_t c) {
  if (c < 0xa0 || c > 0xfeff)
    return false;
  auto index = static_cast<uint64_t>(c - 0xa0) / 0x3fa;
  if ((uint64_t{1} << index) & 0x7ffffffffffff75eull)
    return false;
  if (c == 0xa0 || c == 0x3000 || c == 0xfeff)
    return true;
  if (index == 5)
    return c == 0x1680 || c == 0x180e;
  if (index == 7)
    return (c >= 0x2000 && c <= 0x200b) || (c >= 0x205f && c <= 0x2060)
           || c == 0x202f;
  return std::nullopt;
}

inline unsafe_text at(std::string_view text, size_t i, std::string why) {
  unsafe_text out;
  auto nl = i == 0 ? std::string_view::npos : text.rfind('\n', i - 1);
  auto line_start = nl == std::string_view::npos ? 0 : nl + 1;
  out.line = 1;
  for (size_t k = 0; k < line_start; ++k)
    out.line += text[k] == '\n' ? 1 : 0;
  out.column = 1;
  for (size_t k = line_start; k < i; ++k)
    out.column += (static_cast<uint8_t>(text[k]) & 0xc0) != 0x80 ? 1 : 0;
  auto cp = code_point_at(text, i);
  if (cp < 0) {
    char hex[8];
    std::snprintf(hex, sizeof(hex), "0x%02X",
                  static_cast<unsigned>(static_cast<uint8_t>(text[i])));
    out.what = std::string{"byte "} + hex + ", not UTF-8, " + why;
  } else {
    char name[16];
    std::snprintf(name, sizeof(name), "U+%04X", static_cast<unsigned>(cp));
    out.what = std::string{"non-ASCII character "} + name + ' ' + why;
  }
  return out;
}

inline bool is_non_ascii(char c) {
  return static_cast<uint8_t>(c) >= 0x80;
}

/// Scans a multi-line basic string from just after its opening `"""`;
/// returns the index just past it (or text.size()) or sets `bad`.
inline size_t ml_basic(std::string_view text, size_t i,
                       std::optional<unsafe_text>& bad) {
  auto n = text.size();
  bool continued = false; // after a line-ending backslash
  while (i < n) {
    auto c = text[i];
    if (c == '\\') {
      continued = false;
      auto j = i + 1;
      if (j < n && is_non_ascii(text[j])) {
        bad = at(text, j, "after a backslash (not an escape: write it as "
                          "\\uXXXX or drop the backslash)");
        return n;
      }
      if (j < n && (text[j] == ' ' || text[j] == '\t' || text[j] == '\n'
                    || text[j] == '\r')) {
        while (j < n && (text[j] == ' ' || text[j] == '\t'))
          ++j;
        if (j < n && is_non_ascii(text[j])) {
          bad = at(text, j, "after a backslash (only a line break may "
                            "follow a line-ending backslash)");
          return n;
        }
        continued = true;
        i = j;
        continue;
      }
      i = j + 1; // the escaped character
      continue;
    }
    if (c == '"') {
      size_t run = 0;
      while (i + run < n && text[i + run] == '"')
        ++run;
      if (run >= 3)
        return i + (run < 5 ? run : 5); // up to two quotes end the string
      i += run;
      continued = false;
      continue;
    }
    if (c == '\n' || c == '\r') {
      ++i;
      continue;
    }
    if (continued) {
      if (c == ' ' || c == '\t') {
        ++i;
        continue;
      }
      if (is_non_ascii(c)) {
        auto cp = code_point_at(text, i);
        auto ws = toml_horizontal_whitespace(cp);
        if (cp >= 0 && !ws) {
          bad = at(text, i,
                   "right after a line-ending backslash (the TOML parser "
                   "cannot read it there: write it as \\uXXXX)");
          return n;
        }
        if (ws && *ws) { // U+00A0, U+FEFF, ...: toml++ skips them too
          i += sequence_length(text[i]);
          continue;
        }
      }
      continued = false;
    }
    ++i;
  }
  return n;
}

/// Scans a string that ends at `quote` (a basic string when `escapes`), or
/// at `"""`/`'''` when `multi`, from just after its opening delimiter.
inline size_t literal_or_basic(std::string_view text, size_t i, char quote,
                               bool escapes, bool multi) {
  auto n = text.size();
  while (i < n) {
    auto c = text[i];
    if (escapes && c == '\\') {
      i += 2;
      continue;
    }
    if (c == quote) {
      if (!multi)
        return i + 1;
      size_t run = 0;
      while (i + run < n && text[i + run] == quote)
        ++run;
      if (run >= 3)
        return i + (run < 5 ? run : 5);
      i += run;
      continue;
    }
    if (!multi && (c == '\n' || c == '\r'))
      return i; // an error for toml++, which stops here
    ++i;
  }
  return n;
}

inline const char* outside_why() {
  return "outside a string or comment (TOML is ASCII there: quote the key "
         "or the string, or check for a look-alike letter)";
}

inline bool ends_value(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == ']'
         || c == '}' || c == ',' || c == '#';
}

/// The end of the run that toml++ scans ahead from the first character of
/// a value that is no string, array or inline table, to guess its type
/// (parser.inl, parse_value): it tests each character up to a value
/// terminator for whitespace, quotes included, so a quote there starts no
/// string. A date and a time one space apart are scanned on: toml++ takes
/// the space and the digit after it, then takes the next character
/// whatever it is (a terminator too: its scan loop tests only after a
/// step) and goes on to the next terminator. Sets `bad` at a non-ASCII
/// character in the run.
inline size_t value_run(std::string_view text, size_t i,
                        std::optional<unsafe_text>& bad) {
  auto n = text.size();
  for (;;) {
    for (; i < n && !ends_value(text[i]); ++i)
      if (is_non_ascii(text[i])) {
        bad = at(text, i, outside_why());
        return n;
      }
    if (i + 1 < n && text[i] == ' ' && text[i + 1] >= '0'
        && text[i + 1] <= '9') {
      i += 2;
      if (i < n && is_non_ascii(text[i])) {
        bad = at(text, i, outside_why());
        return n;
      }
      i += i < n ? 1 : 0;
      continue;
    }
    return i;
  }
}

} // namespace guard

/// The first character of `text` that toml++ 3.3.0 must not see, if any.
/// Follows keys, values, arrays and inline tables as far as needed to know
/// where toml++ scans a value ahead (`value_run`).
inline std::optional<unsafe_text> find_unsafe_text(std::string_view text) {
  using namespace guard;
  std::optional<unsafe_text> bad;
  std::string open; // the arrays ('[') and inline tables ('{') we are in
  bool value_next = false; // after '=', or '[' or ',' in an array
  auto n = text.size();
  size_t i = text.substr(0, 3) == "\xef\xbb\xbf" ? 3 : 0; // a byte order mark
  auto string_at = [&](size_t at) {
    auto three = [&](char q) { return text.substr(at, 3) == std::string(3, q); };
    if (text[at] == '"' && three('"'))
      return ml_basic(text, at + 3, bad);
    if (text[at] == '"')
      return literal_or_basic(text, at + 1, '"', true, false);
    auto multi = three('\'');
    return literal_or_basic(text, at + (multi ? 3 : 1), '\'', false, multi);
  };
  while (i < n && !bad) {
    auto c = text[i];
    auto in = open.empty() ? '\0' : open.back();
    if (c == ' ' || c == '\t') {
      ++i;
    } else if (c == '\n' || c == '\r') {
      value_next = value_next && in == '['; // arrays span lines
      ++i;
    } else if (c == '#') {
      while (i < n && text[i] != '\n')
        ++i;
    } else if (c == '"' || c == '\'') {
      i = string_at(i);
      value_next = false;
    } else if (value_next && (c == '[' || c == '{')) {
      open += c;
      value_next = c == '[';
      ++i;
    } else if ((c == ']' && in == '[') || (c == '}' && in == '{')) {
      open.pop_back();
      value_next = false;
      ++i;
    } else if (value_next) {
      i = value_run(text, i, bad);
      value_next = false;
    } else if (is_non_ascii(c)) {
      bad = at(text, i, outside_why());
    } else {
      value_next = c == '=' || (c == ',' && in == '[');
      ++i;
    }
  }
  return bad;
}

} // namespace keylane::detail
