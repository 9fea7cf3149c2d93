// SPDX-License-Identifier: Apache-2.0
#include "keylane/detail/text_format.hpp"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <ctime>

namespace keylane::detail {

namespace {

/// The length of the well-formed UTF-8 sequence at the start of `s`
/// (RFC 3629: no overlong forms, no surrogates, nothing above U+10FFFF),
/// or 0 when `s` does not start with one.
size_t utf8_sequence(std::string_view s) {
  auto byte = [&](size_t i) { return static_cast<unsigned char>(s[i]); };
  auto c = byte(0);
  if (c < 0x80)
    return 1;
  size_t n = 0;
  unsigned char lo = 0x80, hi = 0xBF; // range of the second byte
  if (c >= 0xC2 && c <= 0xDF) {
    n = 2;
  } else if (c >= 0xE0 && c <= 0xEF) {
    n = 3;
    lo = c == 0xE0 ? 0xA0 : 0x80; // no overlong forms
    hi = c == 0xED ? 0x9F : 0xBF; // no surrogates
  } else if (c >= 0xF0 && c <= 0xF4) {
    n = 4;
    lo = c == 0xF0 ? 0x90 : 0x80;
    hi = c == 0xF4 ? 0x8F : 0xBF; // nothing above U+10FFFF
  } else {
    return 0;
  }
  if (s.size() < n || byte(1) < lo || byte(1) > hi)
    return 0;
  for (size_t i = 2; i < n; ++i)
    if (byte(i) < 0x80 || byte(i) > 0xBF)
      return 0;
  return n;
}

std::string hex_byte(unsigned char c, const char* prefix) {
  char buf[8];
  std::snprintf(buf, sizeof(buf), "%s%02x", prefix, c);
  return buf;
}

/// Display width: code points, not bytes (wide characters count as one).
size_t width(const std::string& s) {
  return static_cast<size_t>(std::count_if(s.begin(), s.end(), [](char c) {
    return (static_cast<unsigned char>(c) & 0xC0) != 0x80;
  }));
}

} // namespace

std::string json_string(std::string_view s) {
  std::string out = "\"";
  while (!s.empty()) {
    auto c = static_cast<unsigned char>(s[0]);
    size_t n = 1;
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\b': out += "\\b"; break;
      case '\f': out += "\\f"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default:
        if (c < 0x20 || c == 0x7F) {
          out += hex_byte(c, "\\u00");
        } else if ((n = utf8_sequence(s)) > 0) {
          out.append(s.data(), n);
        } else {
          out += "\\ufffd";
          n = 1;
        }
    }
    s.remove_prefix(n);
  }
  out += '"';
  return out;
}

std::string base64(std::string_view bytes) {
  static constexpr char alphabet[]
    = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  for (size_t i = 0; i < bytes.size(); i += 3) {
    auto at = [&](size_t j) -> uint32_t {
      return j < bytes.size() ? static_cast<unsigned char>(bytes[j]) : 0u;
    };
    uint32_t v = at(i) << 16 | at(i + 1) << 8 | at(i + 2);
    auto left = bytes.size() - i; // 1, 2 or 3 or more
    out += alphabet[v >> 18 & 63];
    out += alphabet[v >> 12 & 63];
    out += left > 1 ? alphabet[v >> 6 & 63] : '=';
    out += left > 2 ? alphabet[v & 63] : '=';
  }
  return out;
}

std::string iso_utc(std::chrono::system_clock::time_point t, int digits) {
  using namespace std::chrono;
  int64_t ns = duration_cast<nanoseconds>(t.time_since_epoch()).count();
  // Floor division: times before 1970 keep a non-negative fraction.
  int64_t secs = ns / 1'000'000'000;
  int64_t frac = ns % 1'000'000'000;
  if (frac < 0) {
    --secs;
    frac += 1'000'000'000;
  }
  auto tt = static_cast<std::time_t>(secs);
  std::tm parts{};
  gmtime_r(&tt, &parts);
  char buf[64];
  auto n = std::strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%S", &parts);
  std::string out(buf, n);
  digits = std::clamp(digits, 0, 9);
  if (digits > 0) {
    for (int i = digits; i < 9; ++i)
      frac /= 10;
    std::snprintf(buf, sizeof(buf), ".%0*lld", digits,
                  static_cast<long long>(frac));
    out += buf;
  }
  return out + "Z";
}

std::string hex_preview(std::string_view bytes, size_t max) {
  std::string out;
  for (size_t i = 0; i < bytes.size() && i < max; ++i)
    out += hex_byte(static_cast<unsigned char>(bytes[i]), "");
  if (bytes.size() > max)
    out += "...";
  return out;
}

std::string printable(std::string_view s) {
  std::string out;
  while (!s.empty()) {
    auto c = static_cast<unsigned char>(s[0]);
    size_t n = 1;
    if (c == '\\')
      out += "\\\\";
    else if (c == '\n')
      out += "\\n";
    else if (c == '\r')
      out += "\\r";
    else if (c == '\t')
      out += "\\t";
    else if (c < 0x20 || c == 0x7F)
      out += hex_byte(c, "\\x");
    else if ((n = utf8_sequence(s)) > 0)
      out.append(s.data(), n);
    else
      out += hex_byte(c, "\\x"); // n == 0: skip just this byte
    n = std::max(n, size_t{1});
    s.remove_prefix(n);
  }
  return out;
}

text_table::text_table(std::vector<std::string> header,
                       std::vector<size_t> right)
  : right_(std::move(right)) {
  rows_.push_back(std::move(header));
}

void text_table::add(std::vector<std::string> row) {
  row.resize(rows_.front().size());
  rows_.push_back(std::move(row));
}

void text_table::print(std::ostream& out) const {
  auto cols = rows_.front().size();
  std::vector<size_t> widths(cols, 0);
  for (const auto& row : rows_)
    for (size_t i = 0; i < cols; ++i)
      widths[i] = std::max(widths[i], width(row[i]));
  for (const auto& row : rows_) {
    std::string line;
    for (size_t i = 0; i < cols; ++i) {
      auto pad = std::string(widths[i] - width(row[i]), ' ');
      bool right = std::count(right_.begin(), right_.end(), i) > 0;
      if (i > 0)
        line += "  ";
      if (right)
        line += pad;
      line += row[i];
      if (!right && i + 1 < cols)
        line += pad;
    }
    out << line << '\n';
  }
}

} // namespace keylane::detail
