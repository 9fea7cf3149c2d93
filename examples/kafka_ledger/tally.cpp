// SPDX-License-Identifier: Apache-2.0
#include "tally.hpp"

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

} // namespace kafka_ledger
