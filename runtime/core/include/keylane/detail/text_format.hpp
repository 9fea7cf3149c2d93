// SPDX-License-Identifier: Apache-2.0
#pragma once

// Text formats of the operator tools (keylane-park, keylane-state): JSON
// strings, base64, ISO-8601 times, hex previews, escaped table cells and a
// plain-text table.

#include <chrono>
#include <cstddef>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

namespace keylane::detail {

/// `s` as a JSON string literal, quotes included: `"` and `\` escaped,
/// control characters as \n, \t, ... or \u00XX. Valid UTF-8 passes
/// through; each byte of an invalid sequence becomes U+FFFD, so the output
/// is always valid JSON (payloads, being bytes, go out as base64 instead).
[[nodiscard]] std::string json_string(std::string_view s);

/// `bytes` in base64 (RFC 4648 alphabet, with `=` padding).
[[nodiscard]] std::string base64(std::string_view bytes);

/// `t` in ISO-8601 UTC with `digits` (0 to 9) fractional digits, for
/// example "2024-05-01T12:00:00.123Z" for 3.
[[nodiscard]] std::string iso_utc(std::chrono::system_clock::time_point t,
                                  int digits);

/// The first `max` bytes of `bytes` in lower-case hex, "..." appended when
/// there are more.
[[nodiscard]] std::string hex_preview(std::string_view bytes, size_t max);

/// `s` for one table cell on a terminal: valid UTF-8 as is; `\`, control
/// characters and bytes of invalid UTF-8 escaped C-style (\\, \n, \x1b).
[[nodiscard]] std::string printable(std::string_view s);

/// A plain-text table: a header row and data rows, columns padded to
/// their widest cell and separated by two spaces.
class text_table {
public:
  /// Starts a table with these column titles; columns whose index is in
  /// `right` are right-aligned (numbers).
  explicit text_table(std::vector<std::string> header,
                      std::vector<size_t> right = {});

  /// Adds a row of already printable cells, one per column.
  void add(std::vector<std::string> row);

  /// Writes header and rows; the last column is never padded.
  void print(std::ostream& out) const;

private:
  std::vector<std::vector<std::string>> rows_;
  std::vector<size_t> right_;
};

} // namespace keylane::detail
