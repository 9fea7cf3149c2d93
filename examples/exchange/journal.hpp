// SPDX-License-Identifier: Apache-2.0
#pragma once

// The journal (`--journal FILE`): one JSON object per line, every request a
// book took with its place in the symbol's sequence, and every report, so
// that another program can replay each symbol and check its fills.
//
//   {"type":"order","symbol":"S0001","seq":17,"kind":"D","session":3,...}
//   {"type":"report","symbol":"S0001","seq":17,"symbol_seq":40,"kind":"F",...}
//
// A report's `seq` is the request it answers; reports of requests rejected
// before any book (an unknown symbol, a bad quantity) carry seq 0.

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "orders.hpp"

namespace exchange {

/// One request as the journal holds it.
struct journal_order {
  uint64_t seq = 0;
  order_request request;
  std::string risk; ///< empty: passed (or not checked)
};

/// One report as the journal holds it.
struct journal_report {
  uint64_t seq = 0;
  exec_report report;
};

/// Writes the journal, whole lines at a time: each write to the file ends
/// on a line's end, so a process that dies leaves the journal on a whole
/// line (the lines not yet written are lost with it). A write the disk
/// refuses (full, failing) is cut back to the last whole line and its
/// lines kept, to be written with the next block of lines (one stderr line
/// when writes start failing, one when they work again); `close` says how
/// many it could not write. Thread-safety: none; the output thread owns it.
class journal_writer {
public:
  journal_writer() = default;
  journal_writer(const journal_writer&) = delete;
  journal_writer& operator=(const journal_writer&) = delete;
  ~journal_writer();

  /// Opens `path` for writing (truncating it); false with `error` set.
  [[nodiscard]] bool open(const std::string& path, std::string& error);

  [[nodiscard]] bool is_open() const noexcept { return file_ != nullptr; }

  void order(const journal_order& o);
  void report(uint64_t seq, const exec_report& r);

  /// Flushes and closes; false if a write failed.
  bool close();

  /// Test hook: while non-zero, each write to the file writes half of its
  /// bytes and then fails with this errno, as a disk that fills up does.
  int write_fault = 0;

private:
  void put(const std::string& line);
  bool flush_lines();

  FILE* file_ = nullptr;
  std::string path_;
  std::string pending_; // whole lines not yet written
  uint64_t written_ = 0; // bytes in the file: whole lines
  size_t retry_at_ = 0;  // while failing: try again at this many pending
  bool failing_ = false;
};

/// A whole journal, read back.
struct journal_contents {
  std::vector<journal_order> orders;
  std::vector<journal_report> reports;
  /// The number of the last line if it was skipped: it had no newline and
  /// was not a JSON object (its writer stopped in the middle of it, as a
  /// machine that loses power can leave it); 0 if none was.
  size_t cut_line = 0;
};

/// Reads `path`; false with `error` naming the line on a bad line. An
/// incomplete last line is skipped and named in `cut_line`.
[[nodiscard]] bool read_journal(const std::string& path, journal_contents& out,
                                std::string& error);

} // namespace exchange
