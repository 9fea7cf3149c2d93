// SPDX-License-Identifier: Apache-2.0
#include "keylane/detail/tool_command_line.hpp"

#include <charconv>
#include <cstdint>

#include <CLI/CLI.hpp>

#include "keylane/config_loader.hpp"
#include "keylane/errc.hpp"

namespace keylane::detail {

namespace {

/// Checks the positional arguments (COMMAND, TARGET, KEY) of `cl`.
class positionals {
public:
  positionals(const tool_grammar& g, tool_command_line& cl, bool int_key)
    : g_(g), cl_(cl), int_key_(int_key) {}

  std::optional<std::string> check(std::vector<std::string> args) const {
    if (args.empty())
      return usage("missing COMMAND (list, show, export or " + g_.remove
                   + ")");
    cl_.command = args[0];
    // With --config or --set, the store comes from the settings: one
    // argument less.
    auto from_settings = cl_.from_settings();
    if (from_settings)
      args.insert(args.begin() + 1, std::string{});
    size_t min_args = 2, max_args = 3;
    if (cl_.command == "list")
      max_args = 2;
    else if (cl_.command == "show" || cl_.command == g_.remove)
      min_args = 3;
    else if (cl_.command != "export")
      return usage("unknown command '" + cl_.command
                   + "' (list, show, export or " + g_.remove + ")");
    if (args.size() < min_args)
      return usage("'" + cl_.command + "' needs "
                   + (from_settings ? "KEY (" + g_.target
                                        + " comes from the config)"
                      : min_args == 2 ? g_.target
                                      : g_.target + " and KEY"));
    if (args.size() > max_args)
      return usage("'" + cl_.command + "' takes "
                   + (from_settings
                        ? (max_args == 2 ? "no argument" : "only KEY")
                            + std::string{" with --config or --set ("}
                            + g_.target + " comes from the config)"
                      : max_args == 2 ? "only " + g_.target
                                      : g_.target + " and KEY")
                   + "; unexpected '" + args[max_args] + "'");
    cl_.target = args[1];
    if (args.size() < 3 && int_key_)
      return usage("--int-key needs a KEY");
    if (args.size() < 3)
      return std::nullopt;
    return read_key(args[2]);
  }

private:
  std::optional<std::string> read_key(const std::string& text) const {
    if (!int_key_) {
      cl_.k = key{text};
      return std::nullopt;
    }
    uint64_t x = 0;
    auto last = text.data() + text.size();
    auto [end, ec] = std::from_chars(text.data(), last, x);
    if (text.empty() || ec != std::errc{} || end != last)
      return usage("--int-key: KEY '" + text
                   + "' is not an unsigned 64-bit decimal integer");
    cl_.k = key{x};
    return std::nullopt;
  }

  std::string usage(const std::string& what) const {
    return what + "\n(see '" + g_.prog + " --help')";
  }

  const tool_grammar& g_;
  tool_command_line& cl_;
  bool int_key_;
};

} // namespace

std::optional<std::string>
parse_tool_command_line(int argc, char** argv, const tool_grammar& grammar,
                        tool_command_line& out) {
  CLI::App app{grammar.prog};
  // The tools print their own help text; -h is an ordinary flag here.
  app.set_help_flag();
  app.option_defaults()->multi_option_policy(
    CLI::MultiOptionPolicy::TakeLast);
  bool int_key = false;
  std::vector<std::string> args;
  app.add_flag("-h,--help", out.help);
  app.add_flag("--int-key", int_key);
  app.add_flag("--print-config", out.print_config);
  app.add_option("--config", out.config);
  // One value per --set, so that "--set k=v list" leaves "list" a command.
  app.add_option("--set", out.sets)
    ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll)
    ->allow_extra_args(false);
  app.add_option("args", args);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return std::string{e.what()} + "\n(see '" + grammar.prog + " --help')";
  }
  if (out.help || out.print_config)
    return std::nullopt;
  return positionals{grammar, out, int_key}.check(std::move(args));
}

tool_settings settings_of(const tool_command_line& cl) {
  tool_settings out;
  if (cl.config) {
    auto loaded = load(*cl.config);
    if (!loaded) {
      out.status = 1;
      out.error = render(loaded.error());
      return out;
    }
    out.s = std::move(*loaded);
  }
  if (auto err = apply_overrides(out.s, cl.sets)) {
    out.status = 2;
    out.error = render(err);
  }
  return out;
}

} // namespace keylane::detail
