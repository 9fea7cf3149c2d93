// SPDX-License-Identifier: Apache-2.0
// Writes a small RocksDB state store for the keylane-state tests
// (state_tool_test.cmake), through the library's API: the integer keys 7
// and 42 (42 with origins), and the string keys "7" and one that needs
// escaping. Every field is fixed, so the tool's output is known.
//   state_fixture DIR            writes them
//   state_fixture DIR --corrupt  also stores raw garbage as the value of
//                                the string key "broken", and a record
//                                whose state bytes do not decode as the
//                                key "bad state"
//   state_fixture DIR --damage-log  writes each key in a batch of its own,
//                                closes the store and flips one byte in
//                                the middle of its write-ahead log
//   state_fixture tool ARGS...   runs the state tool with a renderer for
//                                the fixture's state type, as an
//                                application would build its own tool
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "keylane/codec.hpp"
#include "keylane/detail/state_record.hpp"
#include "keylane/errc.hpp"
#include "keylane/state_store.hpp"
#include "keylane/state_tool.hpp"

namespace fixture {

/// The state the fixture's handler would keep per key.
struct account {
  std::string owner;
  int64_t cents = 0;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, account& x) {
  return f(caf::meta::type_name("account"), x.owner, x.cents);
}

std::string to_json(const account& a) {
  // Spread over lines on purpose: the tool must keep each record on one.
  return "{\n  \"owner\": \"" + a.owner + "\",\n  \"cents\": "
         + std::to_string(a.cents) + "\n}";
}

} // namespace fixture

namespace {

using namespace keylane;

int fail(const caf::error& err) {
  std::fprintf(stderr, "state_fixture: %s\n", render(err).c_str());
  return 1;
}

/// Flips a bit of the middle byte of the store's write-ahead log (the
/// store is closed: RocksDB keeps what was written there until its next
/// open, which folds it into a table).
int damage_log(const std::string& dir) {
  for (const auto& e : std::filesystem::directory_iterator{dir}) {
    if (e.path().extension() != ".log" || e.file_size() == 0)
      continue;
    std::fstream f{e.path(), std::ios::in | std::ios::out | std::ios::binary};
    auto at = static_cast<std::streamoff>(e.file_size() / 2);
    char c = 0;
    if (!f.seekg(at) || !f.get(c) || !f.seekp(at)
        || !f.put(static_cast<char>(c ^ 0x10)))
      break;
    std::printf("flipped byte %lld of %s\n", static_cast<long long>(at),
                e.path().c_str());
    return 0;
  }
  std::fprintf(stderr, "state_fixture: no write-ahead log to damage in %s\n",
               dir.c_str());
  return 1;
}

} // namespace

int main(int argc, char** argv) {
  if (argc >= 2 && std::strcmp(argv[1], "tool") == 0) {
    std::vector<char*> args{const_cast<char*>("account-state")};
    args.insert(args.end(), argv + 2, argv + argc);
    return run_state_tool(static_cast<int>(args.size()), args.data(),
                          json_renderer<fixture::account>());
  }
  bool corrupt = argc == 3 && std::strcmp(argv[2], "--corrupt") == 0;
  bool damage = argc == 3 && std::strcmp(argv[2], "--damage-log") == 0;
  if (argc != 2 && !corrupt && !damage) {
    std::fprintf(stderr, "usage: state_fixture DIR [--corrupt | --damage-log]\n"
                         "       state_fixture tool ARGS...\n");
    return 2;
  }
  auto store = open_rocksdb_state_store(argv[1]);
  if (!store)
    return fail(store.error());
  // 2024-05-01T12:00:00.123Z
  constexpr int64_t t0 = 1'714'564'800'123;
  auto rec = [](uint64_t events, int64_t taken_at_ms, fixture::account a) {
    detail::state_record r;
    r.events = events;
    r.taken_at_ms = taken_at_ms;
    r.state = *codec<fixture::account>::encode(a);
    return r;
  };
  auto forty_two = rec(1041, t0 + 60'000, {"bob", -5});
  forty_two.advance("payments/0", 1040);
  forty_two.advance("payments/3", 17);
  std::vector<state_entry> entries{
    {key{uint64_t{7}}, encode_state_record(rec(3, t0, {"ann", 1250}))},
    {key{uint64_t{42}}, encode_state_record(forty_two)},
    {key{std::string{"7"}},
     encode_state_record(rec(1, t0 + 1'000, {"string seven", 0}))},
    {key{std::string{"acct \"q\"\\\t\x01"}},
     encode_state_record(rec(2, t0 + 2'000, {"odd", 99}))},
  };
  if (corrupt) {
    entries.push_back({key{std::string{"broken"}}, "garbage, not a record"});
    auto bad_state = rec(5, t0, {});
    bad_state.state = "\x7f"; // a sound record whose state does not decode
    entries.push_back({key{std::string{"bad state"}},
                       encode_state_record(bad_state)});
  }
  if (damage) {
    for (const auto& e : entries)
      if (auto err = (*store)->write({e}, false))
        return fail(err);
    store->reset();
    std::printf("wrote %zu keys to %s\n", entries.size(), argv[1]);
    return damage_log(argv[1]);
  }
  if (auto err = (*store)->write(entries, true))
    return fail(err);
  std::printf("wrote %zu keys to %s\n", entries.size(), argv[1]);
  return 0;
}
