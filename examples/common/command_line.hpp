// SPDX-License-Identifier: Apache-2.0
#pragma once

// The example programs' and the benchmarks' command lines, on CLI11: their
// one header that includes it (the operator tools' parser lives in the
// library, detail/tool_command_line.hpp, and the exchange's load client,
// C++14 for QuickFIX, includes CLI11 itself). Options are written
// "--name value" or "--name=value", as before CLI11; "-h" or "--help"
// prints the program's own help text (it explains scenarios and output,
// not just the options) and exits 0; a mistake prints "<program>: <what>"
// and "try '<program> --help'" and exits 2.

#include <cstdint>
#include <limits>
#include <type_traits>
#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

namespace keylane::cli {

/// A CLI11 validator for an unsigned decimal integer in [min, max].
[[nodiscard]] CLI::Validator count_check(uint64_t min, uint64_t max);

/// A CLI11 validator for a number in [lo, hi] ("1e8" too); a whole one
/// when `whole`.
[[nodiscard]] CLI::Validator number_check(double lo, double hi, bool whole);

/// A CLI11 validator for a comma-separated list of names from `known`,
/// at least one; `what` names them in the message ("ways").
[[nodiscard]] CLI::Validator names_check(std::vector<std::string> known,
                                         const std::string& what);

/// `text` split at commas, empty parts dropped.
[[nodiscard]] std::vector<std::string> split_names(const std::string& text);

/// A CLI11 validator refusing an empty value: `what` says what it needs.
[[nodiscard]] CLI::Validator not_empty(const std::string& what);

/// Sets `app` up to read options as every program here always has: a
/// repeated option takes the last value, and "-h"/"--help" is an ordinary
/// flag into `help`, for a program that prints its own help text.
void read_as_before(CLI::App& app, bool& help);

/// Parses `argv` into `app`: nothing, or the mistake as text.
[[nodiscard]] std::optional<std::string> parse_or_error(CLI::App& app,
                                                        int argc, char** argv);

/// An option given once per value and kept in order ("--set a=1 --set
/// b=2"): one value each time, so "--set a=1 b=2" leaves "b=2" a mistake
/// (or a positional argument) rather than a second value.
inline CLI::Option* add_repeated(CLI::App& app, const std::string& name,
                                 std::vector<std::string>& into) {
  return app.add_option(name, into)
    ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll)
    ->allow_extra_args(false);
}

/// A whole-number option in [lo, hi] written as any number ("1e6" too,
/// as the benchmarks have always taken it), stored in `into`.
template <class Int>
CLI::Option* add_whole(CLI::App& app, const std::string& name, Int& into,
                       double lo, double hi) {
  return app
    .add_option_function<double>(
      name, [&into](const double& x) { into = static_cast<Int>(x); })
    ->check(number_check(lo, hi, true));
}

/// One program's command line. Declare the options, then `parse`.
///
/// Thread-safety: none; one thread parses.
class command_line {
public:
  /// `help_flags`: the CLI11 names that print `help_text`.
  command_line(std::string program, std::string help_text,
               const std::string& help_flags = "-h,--help");

  /// The CLI11 app, for options the helpers below do not cover.
  [[nodiscard]] CLI::App& app() noexcept { return app_; }

  /// A flag such as "--json" that sets `into` to true.
  CLI::Option* flag(const std::string& name, bool& into);

  /// An option with a text value; given twice, the later one wins.
  template <class Text>
  CLI::Option* text(const std::string& name, Text& into) {
    return app_.add_option(name, into);
  }

  /// An unsigned decimal integer option in [min, max].
  template <class Int>
  CLI::Option* count(const std::string& name, Int& into, uint64_t min,
                     uint64_t max = std::numeric_limits<Int>::max()) {
    static_assert(std::is_integral<Int>::value, "count: Int must be an integer");
    return app_.add_option(name, into)->check(count_check(min, max));
  }

  /// "--config PATH" (not empty), "--set SECTION.KEY=VALUE", repeatable
  /// and kept in order, and "--print-config" (print the effective settings
  /// as TOML and exit 0: `print_config_if`).
  template <class Config>
  void settings(Config& config, std::vector<std::string>& overrides,
                bool& print_config) {
    text("--config", config)->check(not_empty("needs a file path"));
    add_repeated(app_, "--set", overrides);
    flag("--print-config", print_config);
  }

  /// Parses `argv`; prints the help and exits 0 for "--help", prints the
  /// mistake and exits 2 for a bad argument.
  void parse(int argc, char** argv);

  /// Prints `what` and the hint to "--help", then exits with 2.
  [[noreturn]] void fail(const std::string& what) const;

private:
  std::string program_;
  std::string help_text_;
  CLI::App app_;
};

} // namespace keylane::cli
