// SPDX-License-Identifier: Apache-2.0
#include "member_logs.hpp"

#include <fstream>
#include <sstream>
#include <tuple>

namespace kafka_test {

namespace {

using partition_offset = std::pair<int, int64_t>;

int64_t seq_of(const std::string& value) {
  auto i = value.rfind(':');
  return i == std::string::npos ? -1 : std::stoll(value.substr(i + 1));
}

} // namespace

member_logs member_logs::read(const std::vector<std::string>& files) {
  member_logs out;
  for (const auto& f : files) {
    std::ifstream in{f};
    std::string line;
    while (std::getline(in, line)) {
      std::istringstream is{line};
      std::string tag;
      is >> tag;
      if (tag == "F") {
        finish_line x;
        is >> x.partition >> x.offset >> x.key >> x.value >> x.assignment
          >> x.at_ns >> x.status;
        x.member = f;
        if (is)
          out.finished.push_back(std::move(x));
      } else if (tag == "C") {
        commit_line x;
        is >> x.partition >> x.offset >> x.at_ns;
        x.member = f;
        if (is)
          out.commits.push_back(x);
      } else if (tag == "S") {
        uint64_t finished, late, refused, pauses, timeouts;
        is >> finished >> late >> refused >> pauses >> timeouts;
        out.stopped.insert(f);
        if (is) {
          out.refused += refused;
          out.revoke_timeouts += timeouts;
        }
      }
    }
  }
  return out;
}

std::set<std::string> member_logs::values() const {
  std::set<std::string> out;
  for (const auto& x : finished)
    if (x.status == "ok")
      out.insert(x.value);
  return out;
}

int64_t member_logs::committed_total() const {
  std::map<int, int64_t> top;
  for (const auto& c : commits)
    top[c.partition] = std::max(top[c.partition], c.offset);
  int64_t sum = 0;
  for (const auto& [p, o] : top)
    sum += o;
  return sum;
}

size_t member_logs::redelivered() const {
  std::map<partition_offset, size_t> seen;
  for (const auto& x : finished)
    seen[{x.partition, x.offset}]++;
  size_t n = 0;
  for (const auto& [po, k] : seen)
    n += k - 1;
  return n;
}

std::vector<std::string>
member_logs::problems(const std::set<std::string>& produced) const {
  std::vector<std::string> out;
  auto done = values();
  for (const auto& v : produced)
    if (!done.count(v))
      out.push_back("never finished: " + v);

  // Per-key order: within one assignment of one member, a key's values
  // rise by exactly one (a partition delivers its records in order).
  std::map<std::tuple<std::string, uint64_t, std::string>, int64_t> last;
  for (const auto& x : finished) {
    auto n = seq_of(x.value);
    auto id = std::make_tuple(x.member, x.assignment, x.key);
    auto i = last.find(id);
    if (i != last.end() && n != i->second + 1)
      out.push_back(x.member + ": key " + x.key + " went from "
                    + std::to_string(i->second) + " to " + std::to_string(n));
    last[id] = n;
  }

  // First finish of each record, over all members.
  std::map<partition_offset, int64_t> first;
  for (const auto& x : finished) {
    auto [i, fresh] = first.emplace(partition_offset{x.partition, x.offset},
                                    x.at_ns);
    if (!fresh && x.at_ns < i->second)
      i->second = x.at_ns;
  }

  // Commit safety: below a commit, every record finished before it.
  for (const auto& c : commits)
    for (int64_t o = 0; o < c.offset; ++o) {
      auto i = first.find({c.partition, o});
      if (i == first.end() || i->second > c.at_ns) {
        out.push_back(c.member + ": committed " + std::to_string(c.partition)
                      + "@" + std::to_string(c.offset) + " before offset "
                      + std::to_string(o) + " finished");
        break;
      }
    }

  // Only uncommitted records are redelivered: no repeat finish of a record
  // after a commit past it was accepted.
  for (const auto& x : finished) {
    if (first[{x.partition, x.offset}] == x.at_ns)
      continue;
    for (const auto& c : commits)
      if (c.partition == x.partition && c.offset > x.offset
          && c.at_ns < x.at_ns) {
        out.push_back(x.member + ": ran " + std::to_string(x.partition) + "@"
                      + std::to_string(x.offset) + " again after commit "
                      + std::to_string(c.offset) + " by " + c.member);
        break;
      }
  }
  return out;
}

} // namespace kafka_test
