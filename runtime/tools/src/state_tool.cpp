// SPDX-License-Identifier: Apache-2.0
// The state tool: parses its command line as keylane-park does (one parser,
// detail/tool_command_line.hpp), finds DIR (given, or state.path of a
// config file), opens the store and runs one command of
// state_tool_commands.cpp.

#include "keylane/state_tool.hpp"

#include <filesystem>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "state_tool_commands.hpp"
#include "keylane/detail/state_components.hpp"
#include "keylane/detail/tool_command_line.hpp"
#include "keylane/config_loader.hpp"
#include "keylane/errc.hpp"
#include "keylane/key.hpp"
#include "keylane/state_store.hpp"

namespace keylane {

namespace {

using detail::tool_exit_failed;
using detail::tool_exit_ok;
using detail::tool_exit_usage;
using detail::tool_command_line;
using detail::tool_failure;

// %1$s: the program's name.
constexpr const char* help_text
  = R"(usage: %1$s COMMAND DIR [KEY] [--int-key]
       %1$s COMMAND [KEY] [--int-key] --config APP.toml [--set K=V]...

Inspects and resets the keyed state of a keylane state store: the RocksDB
directory a runtime keeps state in (state.store = "rocksdb", state.path),
or, for list, show and export, a Kafka source's changelog topic given as
DIR = kafka:BOOTSTRAP/TOPIC (kafka.changelog_topic; read to its end, each
key's last record). Times are UTC.

commands:
  list DIR            one line per key with state, in the store's order
                      (integer keys by value, then string keys by their
                      bytes): key, kind, events, taken at, state bytes
  show DIR KEY        the key's record as one JSON object: key, key_kind
                      ("string" or "integer"), events, origins (an object
                      {"stream": position}), taken_at, state_bytes,
                      state_base64, and state (the state decoded, as JSON)
                      when this tool was built with a renderer for it
  export DIR [KEY]    JSON lines, one object as show prints it per key (of
                      every key, or of KEY)
  erase DIR KEY       removes the key's state: its next event starts from
                      a fresh state (stop the runtime first)

list, show and export open the store read-only: they change nothing and
also work while a runtime has the store open (showing what it had written
when the tool opened it; if RocksDB fails to open it meanwhile, run the
tool again). erase needs the runtime stopped: only one process may write.

A store whose write-ahead log is damaged is refused, naming the file, as
the runtime refuses it. --set state.recover=point_in_time (or that key in
the --config file) reads it as of the damage instead, with a warning that
says what that drops: list, show and export show what a runtime's
point-in-time recovery would keep, changing nothing; erase opens for
writing and so performs that recovery, for good.

options:
  --config PATH       takes DIR from the runtime's config file (state.store
                      must be "rocksdb"; DIR is state.path); then no DIR
                      argument is given
  --set SECTION.KEY=VALUE
                      overrides a key of that config, as the programs that
                      run the runtime do (repeatable; --set state.path=X
                      alone names DIR too)
  --print-config      prints the settings --config and --set give (the
                      runtime's whole config, as TOML) and exits
  --int-key           KEY is an integer key (unsigned 64-bit, decimal);
                      without it KEY is a string key: "7" and --int-key 7
                      are different keys
  --                  ends the options, for a KEY that starts with '-'
  -h, --help          prints this help

exit status: 0 done, 1 DIR is missing, not a state store, unreadable or
holds a damaged record (list and export still print the others), 2 wrong
usage.
)";

/// The tool's name in messages: argv[0]'s file name.
std::string program_name(int argc, char** argv) {
  if (argc < 1 || argv[0] == nullptr || *argv[0] == '\0')
    return "keylane-state";
  return std::filesystem::path{argv[0]}.filename().string();
}

std::string help(const std::string& prog) {
  std::string out = help_text;
  std::string mark = "%1$s";
  for (auto at = out.find(mark); at != std::string::npos;
       at = out.find(mark, at + prog.size()))
    out.replace(at, mark.size(), prog);
  return out;
}

/// DIR from --config and --set: state.path of a "rocksdb" state store; and
/// its state.recover.
std::optional<tool_failure> dir_from_settings(tool_command_line& cl,
                                              const std::string& prog,
                                              state_recovery& recover) {
  auto given = detail::settings_of(cl);
  if (given.status != 0)
    return tool_failure{given.status, given.error};
  auto& s = given.s;
  // --set state.path alone implies the rocksdb store.
  if (!cl.config && s.state_store == state_backend::none
      && !s.state_path.empty())
    s.state_store = state_backend::rocksdb;
  if (s.state_store != state_backend::rocksdb)
    return tool_failure{tool_exit_failed,
                        s.origin + ": state.store = \""
                          + to_string(s.state_store) + "\": " + prog
                          + " reads only a \"rocksdb\" state store"};
  cl.target = s.state_path;
  recover = s.state_recover;
  return std::nullopt;
}

/// Reads the changelog topic DIR names ("kafka:BOOTSTRAP/TOPIC"), through
/// keylane::kafka when the tool links it.
std::optional<tool_failure> open_changelog(const tool_command_line& cl,
                                           std::unique_ptr<state_store>& out) {
  auto spec = cl.target.substr(6);
  auto slash = spec.rfind('/');
  if (slash == std::string::npos || slash == 0 || slash + 1 == spec.size())
    return tool_failure{tool_exit_usage,
                        cl.target + ": a changelog topic is named "
                                    "kafka:BOOTSTRAP/TOPIC (e.g. "
                                    "kafka:broker:9092/app-state)"};
  if (cl.command == "erase")
    return tool_failure{tool_exit_usage,
                        "erase works on a member's directory, not on a "
                        "changelog topic"};
  if (!detail::component_open_changelog)
    return tool_failure{tool_exit_failed,
                        "this tool was built without keylane::kafka, so it "
                        "cannot read " + cl.target};
  auto st = detail::component_open_changelog(spec.substr(0, slash),
                                             spec.substr(slash + 1));
  if (!st)
    return tool_failure{tool_exit_failed, render(st.error())};
  out = std::move(*st);
  return std::nullopt;
}

/// Opens DIR without ever creating a store: read-only for list, show and
/// export; for erase, read-only first (which refuses a missing, empty or
/// foreign directory), then for writing. A point-in-time recovery's
/// warning goes to standard error.
std::optional<tool_failure> open(const tool_command_line& cl,
                                 state_recovery recover,
                                 detail::tool_output& io,
                                 std::unique_ptr<state_store>& out) {
  auto warn = [&io](log_level, std::string_view line) {
    io.err << io.prog << ": " << line << '\n';
  };
  // erase's writer reports the recovery it performs; its read-only look
  // first would only say the same in other words.
  auto quiet = [](log_level, std::string_view) {};
  if (cl.target.rfind("kafka:", 0) == 0)
    return open_changelog(cl, out);
  auto ro = open_rocksdb_state_store(cl.target, true, recover,
                                     cl.command == "erase" ? log_writer{quiet}
                                                           : log_writer{warn});
  if (!ro)
    return tool_failure{tool_exit_failed, render(ro.error())};
  if (cl.command != "erase") {
    out = std::move(*ro);
    return std::nullopt;
  }
  ro->reset();
  auto rw = open_rocksdb_state_store(cl.target, false, recover, warn);
  if (!rw)
    return tool_failure{tool_exit_failed, render(rw.error())};
  out = std::move(*rw);
  return std::nullopt;
}

std::optional<tool_failure> run(int argc, char** argv,
                                const state_renderer& renderer,
                                detail::tool_output& io) {
  tool_command_line cl;
  if (auto f = detail::parse_tool_command_line(argc, argv,
                                               {io.prog, "DIR", "erase"}, cl))
    return tool_failure{tool_exit_usage, *f};
  if (cl.help) {
    io.out << help(io.prog);
    return std::nullopt;
  }
  if (cl.print_config) {
    auto given = detail::settings_of(cl);
    if (given.status != 0)
      return tool_failure{given.status, given.error};
    io.out << to_toml(given.s) << std::flush;
    return std::nullopt;
  }
  auto recover = state_recovery::strict;
  if (cl.from_settings())
    if (auto f = dir_from_settings(cl, io.prog, recover))
      return f;
  std::unique_ptr<state_store> store;
  if (auto f = open(cl, recover, io, store))
    return f;
  if (cl.command == "list")
    return detail::list_states(*store, cl.target, io);
  if (cl.command == "show")
    return detail::show_state(*store, cl.target, *cl.k, renderer, io);
  if (cl.command == "export")
    return detail::export_states(*store, cl.target, cl.k, renderer, io);
  return detail::erase_state(*store, cl.target, *cl.k, io);
}

} // namespace

int run_state_tool(int argc, char** argv, state_renderer renderer) {
  detail::tool_output io{std::cout, std::cerr, program_name(argc, argv)};
  auto f = run(argc, argv, renderer, io);
  std::cout.flush();
  if (!std::cout) {
    std::cerr << io.prog << ": cannot write the output\n";
    return tool_exit_failed;
  }
  if (!f)
    return tool_exit_ok;
  std::cerr << io.prog << ": " << f->message << '\n';
  return f->status;
}

} // namespace keylane
