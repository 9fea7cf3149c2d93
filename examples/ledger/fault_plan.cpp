// SPDX-License-Identifier: Apache-2.0
#include "fault_plan.hpp"

namespace ledger {

void fault_plan::fail_transiently(uint32_t account, uint32_t index,
                                  uint32_t times) {
  std::lock_guard<std::mutex> guard{mtx_};
  rules_[account] = rule{index, false, times, times};
}

void fault_plan::fail_permanently(uint32_t account, uint32_t index) {
  std::lock_guard<std::mutex> guard{mtx_};
  rules_[account] = rule{index, true, 0, 0};
}

void fault_plan::clear(uint32_t account) {
  std::lock_guard<std::mutex> guard{mtx_};
  rules_.erase(account);
}

std::optional<fault> fault_plan::strike(const ledger_event& ev) {
  std::lock_guard<std::mutex> guard{mtx_};
  auto i = rules_.find(ev.account);
  if (i == rules_.end() || i->second.index != ev.index)
    return std::nullopt;
  auto& r = i->second;
  auto what = account_name(ev.account) + " #" + std::to_string(ev.index);
  if (r.permanent)
    return fault{true, "injected: " + what + " is rejected for good"};
  if (r.left == 0)
    return std::nullopt;
  --r.left;
  return fault{false, "injected: " + what + " timed out (failure "
                        + std::to_string(r.times - r.left) + " of "
                        + std::to_string(r.times) + ")"};
}

} // namespace ledger
