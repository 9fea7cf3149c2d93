// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <utility>

#include <caf/expected.hpp>

#include "keylane/codec.hpp"

namespace keylane {

/// Turns a key's state bytes (as the handler's codec wrote them) into one
/// JSON value, for the "state" field of `show` and `export`; an error when
/// the bytes do not decode. Newlines in the text are replaced by spaces, so
/// each exported record stays on one line; the text is otherwise printed
/// as returned, so it must be valid JSON.
using state_renderer
  = std::function<caf::expected<std::string>(std::string_view state_bytes)>;

/// Runs the state store tool on a command line (`keylane-state --help`
/// prints its usage): `list`, `show`, `export` and `erase` on the RocksDB
/// state store a runtime keeps (`state.store = "rocksdb"`), in the
/// directory given or named by `--config APP.toml` (`state.path`).
/// `keylane-state` itself is `return keylane::run_state_tool(argc, argv);`;
/// an application that wants its states shown decoded builds the same
/// tool with a renderer for its state type, e.g. `json_renderer<S>()`.
/// Writes to standard output and error and returns the exit status: 0
/// done, 1 the store is missing, not a state store, unreadable or holds a
/// damaged record (the others are still listed and exported), 2 wrong
/// usage. Messages start with the program's name (argv[0]'s file name).
///
/// `list`, `show` and `export` open the store read-only (RocksDB's
/// OpenForReadOnly): they change nothing, take no lock, and also work while
/// a runtime has the store open, showing what it had written when the tool
/// opened it. RocksDB does not promise that a read-only open beside a
/// writer succeeds (the writer may delete a file the reader is about to
/// open); if it fails, run it again. `erase` opens the store for writing,
/// which fails while a runtime holds it: stop the runtime first.
[[nodiscard]] int run_state_tool(int argc, char** argv,
                                 state_renderer render = {});

/// A renderer for a state of type `S`: decodes the bytes with
/// `keylane::codec<S>::decode` (the codec the runtime wrote them with) and
/// renders the value with a function `to_json(const S&)` that you declare
/// in `S`'s own namespace, so that argument-dependent lookup finds it,
/// returning the value as JSON text (anything a `std::string` can be built
/// from). For example:
///
/// ```
/// namespace bank {
/// struct balance { std::string owner; int64_t cents = 0; };
/// template <class Inspector>
/// typename Inspector::result_type inspect(Inspector& f, balance& x) {
///   return f(x.owner, x.cents);
/// }
/// std::string to_json(const balance& b) {
///   return "{\"cents\":" + std::to_string(b.cents) + "}";
/// }
/// } // namespace bank
///
/// int main(int argc, char** argv) {
///   return keylane::run_state_tool(argc, argv,
///                                  keylane::json_renderer<bank::balance>());
/// }
/// ```
///
/// A type with no namespace of its own to put `to_json` in (`int`,
/// `std::map<...>`) needs a renderer written by hand instead.
template <class S>
[[nodiscard]] state_renderer json_renderer() {
  static_assert(codec<S>::available,
                "json_renderer<S>: S needs a keylane::codec (an inspect "
                "overload, or a specialisation of keylane::codec<S>)");
  return [](std::string_view bytes) -> caf::expected<std::string> {
    auto x = codec<S>::decode(bytes);
    if (!x)
      return std::move(x.error());
    const S& value = *x;
    return std::string{to_json(value)};
  };
}

} // namespace keylane
