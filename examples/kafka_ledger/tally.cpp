// SPDX-License-Identifier: Apache-2.0
#include "tally.hpp"

#include <climits>
#include <iterator>
#include <sstream>

namespace kafka_ledger {

void tally::add(int who, const std::string& line) {
  std::istringstream in{line};
  std::string tag, account;
  long partition, offset, n, assignment;
  if (!(in >> tag >> partition >> offset >> account >> n >> assignment)
      || tag != "F")
    return;
  std::lock_guard<std::mutex> guard{mu_};
  ++lines_;
  ++per_[who];
  done_.emplace(account, n);
  auto top = done_.lower_bound({account, LONG_MAX});
  if (top != done_.begin() && std::prev(top)->first == account
      && std::prev(top)->second == n)
    where_[account] = {partition, offset};
  // A partition hands out an account's events in order, so within one
  // assignment a consumer sees n, n+1, n+2, ...
  auto id = std::make_tuple(who, assignment, account);
  auto i = last_.find(id);
  if (i != last_.end() && n != i->second + 1)
    ++violations_;
  last_[id] = n;
}

size_t tally::distinct() const {
  std::lock_guard<std::mutex> guard{mu_};
  return done_.size();
}

size_t tally::lines() const {
  std::lock_guard<std::mutex> guard{mu_};
  return lines_;
}

std::map<int, size_t> tally::per_consumer() const {
  std::lock_guard<std::mutex> guard{mu_};
  return per_;
}

size_t tally::order_violations() const {
  std::lock_guard<std::mutex> guard{mu_};
  return violations_;
}

std::string tally::missing(const std::map<std::string, long>& produced) const {
  std::lock_guard<std::mutex> guard{mu_};
  std::string out;
  for (const auto& [account, count] : produced) {
    long first = -1, last = -1, n_missing = 0;
    for (long n = 0; n < count; ++n)
      if (done_.count({account, n}) == 0) {
        if (first < 0)
          first = n;
        last = n;
        ++n_missing;
      }
    if (n_missing == 0)
      continue;
    auto w = where_.find(account);
    out += account + " (" + (w == where_.end()
                               ? std::string{"none finished"}
                               : "partition " + std::to_string(w->second.first)
                                   + ", last offset "
                                   + std::to_string(w->second.second))
           + "): missing #" + std::to_string(first) + "..#"
           + std::to_string(last) + " (" + std::to_string(n_missing) + ")\n";
  }
  return out;
}

} // namespace kafka_ledger
