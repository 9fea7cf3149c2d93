// SPDX-License-Identifier: Apache-2.0
#include "tally.hpp"

#include <algorithm>

#include <progress.hpp>

namespace ledger {

namespace {

double seconds(clock::duration d) {
  return std::chrono::duration<double>(d).count();
}

} // namespace

tally::tally(const workload& w, keylane::cli::progress* shown)
  : t0_(clock::now()), shown_(shown), accounts_(w.events_per_account.size()) {}

void tally::applied(const ledger_event& ev, bool accepted) {
  std::lock_guard<std::mutex> guard{mtx_};
  auto& rec = accounts_.at(ev.account);
  auto index = static_cast<int64_t>(ev.index);
  if (index < rec.highest_applied)
    ++violations_;
  else
    rec.highest_applied = index;
  if (!accepted)
    ++business_errors_;
}

void tally::finished(uint32_t account) {
  auto now = clock::now() - t0_;
  std::lock_guard<std::mutex> guard{mtx_};
  auto& rec = accounts_.at(account);
  rec.last_finish = std::max(rec.last_finish, now);
  ++events_;
  if (shown_)
    shown_->add();
}

way_result tally::result(std::string name) const {
  std::lock_guard<std::mutex> guard{mtx_};
  way_result r;
  r.name = std::move(name);
  r.events = events_;
  r.violations = violations_;
  r.business_errors = business_errors_;
  std::vector<double> cold;
  for (size_t a = 0; a < accounts_.size(); ++a) {
    auto t = seconds(accounts_[a].last_finish);
    r.total_s = std::max(r.total_s, t);
    if (a == hot_account)
      r.hot_last_s = t;
    else
      cold.push_back(t);
  }
  if (!cold.empty()) {
    std::sort(cold.begin(), cold.end());
    auto mid = cold.size() / 2;
    r.cold_median_s = cold.size() % 2 == 1 ? cold[mid]
                                           : (cold[mid - 1] + cold[mid]) / 2;
    r.cold_last_s = cold.back();
  }
  return r;
}

} // namespace ledger
