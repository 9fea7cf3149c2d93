// SPDX-License-Identifier: Apache-2.0
#pragma once

// The example programs' command-line walk: flags, and options written as
// "--name value" or "--name=value". A mistake prints
// "<program>: <what>" and "try '<program> --help'" and exits with 2.

#include <cstdint>
#include <optional>
#include <string>

namespace keylane::cli {

/// Walks `argv` one argument at a time.
///
/// Thread-safety: none; one thread parses.
class arg_reader {
public:
  arg_reader(std::string program, int argc, char** argv)
    : program_(std::move(program)), argc_(argc), argv_(argv) {}

  /// Moves to the next argument; false after the last.
  [[nodiscard]] bool next();

  /// The current argument.
  [[nodiscard]] const std::string& arg() const noexcept { return arg_; }

  /// True when the current argument is the flag `name`.
  [[nodiscard]] bool flag(const char* name) const { return arg_ == name; }

  /// The value when the current argument is option `name` (taking the next
  /// argument for "--name value"); exits with 2 when the value is missing.
  [[nodiscard]] std::optional<std::string> value(const char* name);

  /// `value(name)` read as an integer >= `min`; exits with 2 otherwise.
  [[nodiscard]] std::optional<uint64_t> count(const char* name, uint64_t min);

  /// Prints `what` and the hint to `--help`, then exits with 2.
  [[noreturn]] void fail(const std::string& what) const;

private:
  std::string program_;
  int argc_;
  char** argv_;
  int i_ = 0;
  std::string arg_;
};

} // namespace keylane::cli
