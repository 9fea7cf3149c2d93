// SPDX-License-Identifier: Apache-2.0
// Rules that tie keys together (or check a key's shape beyond its type),
// reported at the key that must change.

#include <algorithm>
#include <string>

#include "config_reader.hpp"

namespace keylane::detail {

namespace {

// "host:port", the host non-empty (an IPv6 host in brackets).
bool valid_listen(const std::string& x) {
  auto colon = x.rfind(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == x.size()
      || x.size() - colon - 1 > 5)
    return false;
  auto port = x.substr(colon + 1);
  if (!std::all_of(port.begin(), port.end(),
                   [](char ch) { return ch >= '0' && ch <= '9'; }))
    return false;
  auto n = std::stoi(port);
  return n >= 1 && n <= 65535;
}

} // namespace

const std::vector<combination>& combinations() {
  static const std::vector<combination> rules{
    {"metrics", "listen", {"metrics.listen"}, [](const settings& s) {
       return std::string{
         s.metrics_listen.empty() || valid_listen(s.metrics_listen)
           ? ""
           : "must be \"host:port\" with a port from 1 to 65535, e.g. "
             "\"127.0.0.1:9464\" (or \"\" for no endpoint)"};
     }},
    {"sink", "spill_path", {"sink.spill_path", "runtime.order",
                            "runtime.window"},
     [](const settings& s) {
       if (s.spill_path.empty())
         return std::string{};
       if (s.order != order_mode::global)
         return std::string{"needs runtime.order = \"global\" (the other "
                            "orders hold no results back)"};
       if (s.window_auto)
         return std::string{"and runtime.window = \"auto\" are "
                            "alternatives: spill keeps the window fixed in "
                            "memory and admits beyond it"};
       return std::string{};
     }},
    {"park", "store", {"park.store", "park.path"}, [](const settings& s) {
       return std::string{s.park == park_mode::sqlite && s.park_path.empty()
                            ? "needs park.path, the SQLite file to park "
                              "events in"
                            : ""};
     }},
    {"state", "store", {"state.store", "state.path"}, [](const settings& s) {
       return std::string{s.state_store == state_backend::rocksdb
                              && s.state_path.empty()
                            ? "needs state.path, the directory of the "
                              "RocksDB database to keep state in"
                            : ""};
     }},
  };
  return rules;
}

} // namespace keylane::detail
