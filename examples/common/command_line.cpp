// SPDX-License-Identifier: Apache-2.0
#include "command_line.hpp"

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <iostream>
#include <sstream>

namespace keylane::cli {

CLI::Validator count_check(uint64_t min, uint64_t max) {
  auto range = "needs an integer >= " + std::to_string(min)
               + (max == std::numeric_limits<uint64_t>::max()
                    ? std::string{}
                    : " and <= " + std::to_string(max));
  return CLI::Validator{
    [min, max, range](std::string& text) -> std::string {
      uint64_t x = 0;
      auto last = text.data() + text.size();
      auto [end, ec] = std::from_chars(text.data(), last, x);
      if (text.empty() || ec != std::errc{} || end != last || x < min
          || x > max)
        return range + ", got '" + text + "'";
      return {};
    },
    "N"};
}

CLI::Validator number_check(double lo, double hi, bool whole) {
  std::ostringstream range;
  range << "must be " << (whole ? "a whole number" : "a number") << " from "
        << lo << " to " << hi;
  return CLI::Validator{
    [lo, hi, whole, range = range.str()](std::string& text) -> std::string {
      errno = 0;
      char* end = nullptr;
      auto x = std::strtod(text.c_str(), &end);
      if (text.empty() || errno != 0 || *end != '\0' || !(x >= lo && x <= hi)
          || (whole && x != std::floor(x)))
        return text + ": " + range;
      return {};
    },
    "N"};
}

std::vector<std::string> split_names(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in{text};
  std::string part;
  while (std::getline(in, part, ','))
    if (!part.empty())
      out.push_back(part);
  return out;
}

CLI::Validator names_check(std::vector<std::string> known,
                           const std::string& what) {
  return CLI::Validator{
    [known = std::move(known), what](std::string& text) -> std::string {
      auto given = split_names(text);
      if (given.empty())
        return "needs at least one name";
      for (auto& g : given)
        if (std::find(known.begin(), known.end(), g) == known.end()) {
          auto error = "unknown " + what + " '" + g + "'; known:";
          for (auto& k : known)
            error += " " + k;
          return error;
        }
      return {};
    },
    "a,b"};
}

CLI::Validator not_empty(const std::string& what) {
  return CLI::Validator{[what](std::string& text) -> std::string {
                          return text.empty() ? what : std::string{};
                        },
                        "PATH"};
}

void read_as_before(CLI::App& app, bool& help) {
  // CLI11's default is to refuse a repeated option.
  app.option_defaults()->multi_option_policy(
    CLI::MultiOptionPolicy::TakeLast);
  app.set_help_flag();
  app.add_flag("-h,--help", help);
}

std::optional<std::string> parse_or_error(CLI::App& app, int argc,
                                          char** argv) {
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return std::string{e.what()};
  }
  return std::nullopt;
}

command_line::command_line(std::string program, std::string help_text,
                           const std::string& help_flags)
  : program_(std::move(program)),
    help_text_(std::move(help_text)),
    app_(program_) {
  app_.option_defaults()->multi_option_policy(
    CLI::MultiOptionPolicy::TakeLast); // as read_as_before
  app_.set_help_flag(help_flags, "print this text");
}

CLI::Option* command_line::flag(const std::string& name, bool& into) {
  return app_.add_flag(name, into)
    ->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
}

void command_line::parse(int argc, char** argv) {
  try {
    app_.parse(argc, argv);
  } catch (const CLI::CallForHelp&) {
    std::cout << help_text_;
    std::exit(0);
  } catch (const CLI::ParseError& e) {
    fail(e.what());
  }
}

void command_line::fail(const std::string& what) const {
  std::cerr << program_ << ": " << what << "\ntry '" << program_
            << " --help'\n";
  std::exit(2);
}

} // namespace keylane::cli
