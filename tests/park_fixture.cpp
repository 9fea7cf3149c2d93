// SPDX-License-Identifier: Apache-2.0
// Writes a small park store for the keylane-park tests (park_tool_test.cmake):
// a string key that needs JSON escaping with two records, and the integer
// key 7 with one. Every field is fixed, so the tool's output is known.
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "keylane/errc.hpp"
#include "keylane/park_store.hpp"

int main(int argc, char** argv) {
  using namespace keylane;
  if (argc != 2) {
    std::fprintf(stderr, "usage: park_fixture FILE\n");
    return 2;
  }
  // 2024-05-01T12:00:00.123456789Z
  std::chrono::system_clock::time_point t0{
    std::chrono::nanoseconds{1'714'564'800'123'456'789}};
  auto store = open_sqlite_park_store(argv[1]);
  if (!store) {
    std::fprintf(stderr, "park_fixture: %s\n", render(store.error()).c_str());
    return 1;
  }
  key odd{std::string{"acct \"q\"\\\t\x01"}};
  auto rec = [](key k, uint64_t seq, std::string payload, std::string reason,
                uint32_t attempts, std::chrono::system_clock::time_point at) {
    parked_record r;
    r.k = std::move(k);
    r.seq = seq;
    r.payload = std::move(payload);
    r.reason = std::move(reason);
    r.attempts = attempts;
    r.parked_at = at;
    return r;
  };
  std::vector<parked_record> rs;
  rs.push_back(rec(odd, 10, std::string("\0\1\xffhi", 5),
                   "handler threw: \"bad\"\namount", 3, t0));
  rs.push_back(rec(odd, 11, std::string(40, 'A'), "key parked", 0,
                   t0 + std::chrono::seconds{1}));
  rs.push_back(rec(key{uint64_t{7}}, 12, "seven", "timeout", 5,
                   t0 + std::chrono::seconds{60}));
  auto ids = (*store)->append(std::move(rs));
  if (!ids) {
    std::fprintf(stderr, "park_fixture: %s\n", render(ids.error()).c_str());
    return 1;
  }
  std::printf("wrote %zu records to %s\n", ids->size(), argv[1]);
  return 0;
}
