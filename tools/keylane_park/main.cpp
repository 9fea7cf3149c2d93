// SPDX-License-Identifier: Apache-2.0
// keylane-park: the operator's view of a durable park store. Lists parked
// keys, shows a key's records, exports records as JSON lines and discards a
// key's records. Exit status: 0 done, 1 file missing / not a park store /
// unreadable, 2 wrong usage.

#include <cstdint>
#include <filesystem>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <system_error>
#include <vector>

#include "keylane/config_loader.hpp"
#include "keylane/detail/text_format.hpp"
#include "keylane/detail/tool_command_line.hpp"
#include "keylane/errc.hpp"
#include "keylane/key.hpp"
#include "keylane/park_store.hpp"

namespace {

using namespace keylane;
using keylane::detail::base64;
using keylane::detail::hex_preview;
using keylane::detail::iso_utc;
using keylane::detail::json_string;
using keylane::detail::printable;
using keylane::detail::text_table;
using keylane::detail::tool_command_line;
using keylane::detail::parse_tool_command_line;
using keylane::detail::settings_of;

constexpr int exit_ok = 0;
constexpr int exit_failed = 1;
constexpr int exit_usage = 2;

constexpr const char* help_text
  = R"(usage: keylane-park COMMAND FILE [KEY] [--int-key]
       keylane-park COMMAND [KEY] [--int-key] --config APP.toml [--set K=V]...

Inspects and cleans up the parked events of a keylane park store: the SQLite
file a runtime writes with keylane::open_sqlite_park_store. Times are UTC.

commands:
  list FILE           one line per parked key, oldest first: key, kind,
                      count, first parked at, first reason
  show FILE KEY       the key's records in order: id, seq, attempts, parked
                      at, payload size, first 32 payload bytes in hex, reason
  export FILE [KEY]   JSON lines, one object per record (of every key, or of
                      KEY): id, seq, key, key_kind ("string" or "integer"),
                      reason, attempts, parked_at, payload_base64
  discard FILE KEY    removes every parked record of KEY, prints how many

options:
  --config PATH       takes FILE from the runtime's config file (park.store
                      must be "sqlite"; FILE is park.path); then no FILE
                      argument is given
  --set SECTION.KEY=VALUE
                      overrides a key of that config, as the programs that
                      run the runtime do (repeatable; --set park.path=X
                      alone names FILE too)
  --print-config      prints the settings --config and --set give (the
                      runtime's whole config, as TOML) and exits
  --int-key           KEY is an integer key (unsigned 64-bit, decimal);
                      without it KEY is a string key: "7" and --int-key 7
                      are different keys
  --                  ends the options, for a KEY that starts with '-'
  -h, --help          prints this help

exit status: 0 done, 1 FILE is missing, not a park store or unreadable,
2 wrong usage.
)";

/// A failure to report: message and exit status.
struct failure {
  int status;
  std::string message;
};

std::string describe(const key& k) {
  if (k.is_integer())
    return "integer key " + k.to_string();
  std::string quoted;
  for (char c : printable(k.str())) // printable escapes `\`, not `"`
    quoted += c == '"' ? std::string{"\\\""} : std::string(1, c);
  return "string key \"" + quoted + "\"";
}

std::string cell(const key& k) {
  return k.is_integer() || !k.str().empty() ? printable(k.to_string())
                                            : "\"\"";
}

/// FILE from --config and --set: park.path of a "sqlite" park store.
std::optional<failure> file_from_settings(tool_command_line& cl) {
  auto given = settings_of(cl);
  if (given.status != 0)
    return failure{given.status, given.error};
  auto& s = given.s;
  // --set park.path alone implies the sqlite store.
  if (!cl.config && s.park == park_mode::memory && !s.park_path.empty())
    s.park = park_mode::sqlite;
  if (s.park != park_mode::sqlite)
    return failure{exit_failed,
                   s.origin + ": park.store = \"" + to_string(s.park)
                     + "\": keylane-park reads only a \"sqlite\" park store"};
  cl.target = s.park_path;
  return std::nullopt;
}

/// Opens FILE without creating it: a path that does not exist is an error.
/// `list`, `show` and `export` open it read-only, so they neither change a
/// file nor need write access to it or its directory; `discard` opens an
/// existing store only.
std::optional<failure> open(const std::string& file, sqlite_access access,
                            std::unique_ptr<park_store>& out) {
  std::error_code ec;
  auto st = std::filesystem::status(file, ec);
  if (st.type() == std::filesystem::file_type::not_found)
    return failure{exit_failed, file + ": no such file (nothing was parked"
                                       " there, or the path is wrong)"};
  if (ec)
    return failure{exit_failed, file + ": " + ec.message()};
  if (std::filesystem::is_directory(st))
    return failure{exit_failed, file + ": is a directory, not a park store"};
  auto store = open_sqlite_park_store(file, access);
  if (!store)
    return failure{exit_failed, render(store.error())};
  out = std::move(*store);
  return std::nullopt;
}

failure store_failure(const caf::error& err) {
  return {exit_failed, render(err)};
}

std::optional<failure> list(park_store& store, const std::string& file) {
  auto keys = store.keys();
  if (!keys)
    return store_failure(keys.error());
  if (keys->empty()) {
    std::cout << "no parked events in " << file << '\n';
    return std::nullopt;
  }
  text_table table{{"KEY", "KIND", "COUNT", "FIRST PARKED AT",
                    "FIRST REASON"},
                   {2}};
  uint64_t total = 0;
  for (const auto& pk : *keys) {
    table.add({cell(pk.k), pk.k.is_integer() ? "integer" : "string",
               std::to_string(pk.count), iso_utc(pk.parked_at, 3),
               printable(pk.first_reason)});
    total += pk.count;
  }
  table.print(std::cout);
  std::cout << keys->size() << (keys->size() == 1 ? " key, " : " keys, ")
            << total << (total == 1 ? " record" : " records") << '\n';
  return std::nullopt;
}

std::optional<failure> show(park_store& store, const std::string& file,
                            const key& k) {
  auto records = store.records(k);
  if (!records)
    return store_failure(records.error());
  if (records->empty()) {
    std::cout << describe(k) << ": no parked records in " << file << '\n';
    return std::nullopt;
  }
  std::cout << describe(k) << ": " << records->size()
            << (records->size() == 1 ? " parked record\n"
                                     : " parked records\n");
  text_table table{{"ID", "SEQ", "ATTEMPTS", "PARKED AT", "SIZE",
                    "PAYLOAD (HEX)", "REASON"},
                   {0, 1, 2, 4}};
  for (const auto& r : *records)
    table.add({std::to_string(r.id), std::to_string(r.seq),
               std::to_string(r.attempts), iso_utc(r.parked_at, 3),
               std::to_string(r.payload.size()), hex_preview(r.payload, 32),
               printable(r.reason)});
  table.print(std::cout);
  return std::nullopt;
}

std::string json_line(const parked_record& r) {
  return "{\"id\":" + std::to_string(r.id) + ",\"seq\":"
         + std::to_string(r.seq) + ",\"key\":" + json_string(r.k.to_string())
         + ",\"key_kind\":" + (r.k.is_integer() ? "\"integer\"" : "\"string\"")
         + ",\"reason\":" + json_string(r.reason) + ",\"attempts\":"
         + std::to_string(r.attempts) + ",\"parked_at\":\""
         + iso_utc(r.parked_at, 9) + "\",\"payload_base64\":\""
         + base64(r.payload) + "\"}";
}

std::optional<failure> export_json(park_store& store,
                                   const std::optional<key>& only) {
  std::vector<key> keys;
  if (only) {
    keys.push_back(*only);
  } else {
    auto all = store.keys();
    if (!all)
      return store_failure(all.error());
    for (auto& pk : *all)
      keys.push_back(std::move(pk.k));
  }
  for (const auto& k : keys) {
    auto records = store.records(k);
    if (!records)
      return store_failure(records.error());
    for (const auto& r : *records)
      std::cout << json_line(r) << '\n';
  }
  return std::nullopt;
}

std::optional<failure> discard(park_store& store, const std::string& file,
                               const key& k) {
  auto n = store.discard(k);
  if (!n)
    return store_failure(n.error());
  std::cout << "discarded " << *n << (*n == 1 ? " record" : " records")
            << " of " << describe(k) << " from " << file << '\n';
  return std::nullopt;
}

std::optional<failure> run(int argc, char** argv) {
  tool_command_line cl;
  if (auto f = parse_tool_command_line(argc, argv,
                                       {"keylane-park", "FILE", "discard"}, cl))
    return failure{exit_usage, *f};
  if (cl.help) {
    std::cout << help_text;
    return std::nullopt;
  }
  if (cl.print_config) {
    auto given = settings_of(cl);
    if (given.status != 0)
      return failure{given.status, given.error};
    std::cout << to_toml(given.s) << std::flush;
    return std::nullopt;
  }
  if (cl.from_settings())
    if (auto f = file_from_settings(cl))
      return f;
  std::unique_ptr<park_store> store;
  auto access = cl.command == "discard" ? sqlite_access::existing
                                        : sqlite_access::read_only;
  if (auto f = open(cl.target, access, store))
    return f;
  if (cl.command == "list")
    return list(*store, cl.target);
  if (cl.command == "show")
    return show(*store, cl.target, *cl.k);
  if (cl.command == "export")
    return export_json(*store, cl.k);
  return discard(*store, cl.target, *cl.k);
}

} // namespace

int main(int argc, char** argv) {
  auto f = run(argc, argv);
  std::cout.flush();
  if (!std::cout) {
    std::cerr << "keylane-park: cannot write the output\n";
    return exit_failed;
  }
  if (!f)
    return exit_ok;
  std::cerr << "keylane-park: " << f->message << '\n';
  return f->status;
}
