// SPDX-License-Identifier: Apache-2.0
// Fuzzes reading a park store file: the input is written as the SQLite
// file, opened with open_sqlite_park_store, and every record of every key
// read back (keys(), records(), is_parked()), as keylane-park list and a
// replay do. A damaged or foreign file must yield park_store_failed, never
// a crash; the rows' decoding (key kind and text, times) is ours, the page
// format SQLite's. There is no standalone record decoder to call: the row
// to record conversion lives inside sqlite_park_store.cpp.

#include <cstdio>
#include <fstream>
#include <string>

#include <unistd.h>

#include "fuzz_check.hpp"
#include "keylane/park_store.hpp"

namespace {

std::string store_path() {
  static const std::string path = "/tmp/keylane-fuzz-park-"
                                  + std::to_string(::getpid()) + ".db";
  return path;
}

void remove_store(const std::string& path) {
  for (const char* suffix : {"", "-wal", "-shm", "-journal"})
    std::remove((path + suffix).c_str());
}

void check(const caf::error& err, const char* where) {
  keylane::fuzz::require_error(err, keylane::errc::park_store_failed, where);
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace keylane;
  auto path = store_path();
  remove_store(path);
  {
    std::ofstream out{path, std::ios::binary};
    out.write(reinterpret_cast<const char*>(data),
              static_cast<std::streamsize>(size));
  }
  {
    auto store = open_sqlite_park_store(path);
    if (!store) {
      check(store.error(), "open");
    } else if (auto keys = (*store)->keys(); !keys) {
      check(keys.error(), "keys");
    } else {
      for (const auto& pk : *keys) {
        auto records = (*store)->records(pk.k);
        if (!records) {
          check(records.error(), "records");
          continue;
        }
        if (auto parked = (*store)->is_parked(pk.k); !parked)
          check(parked.error(), "is_parked");
      }
    }
  }
  remove_store(path);
  return 0;
}
