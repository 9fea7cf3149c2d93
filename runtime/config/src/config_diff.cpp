// SPDX-License-Identifier: Apache-2.0
#include <algorithm>
#include <iterator>
#include <map>

#include "config_reader.hpp"
#include "keylane/reload.hpp"

namespace keylane {

bool reloads_at_run_time(std::string_view key) noexcept {
  static constexpr std::string_view keys[] = {
    "runtime.max_active_keys",  "runtime.window",
    "runtime.window_max",
    "retry.max_attempts",       "retry.initial_backoff_ms",
    "retry.multiplier",         "retry.max_backoff_ms",
    "retry.jitter",             "retry.attempt_timeout_ms",
    "log.level",                "log.stall_ms",
    "metrics.latency"};
  return std::find(std::begin(keys), std::end(keys), key) != std::end(keys);
}

std::vector<setting_change> differences(const settings& a,
                                        const settings& b) {
  auto before = detail::flatten(a);
  auto after = detail::flatten(b);
  std::map<std::string, std::string> old_values(before.begin(), before.end());
  std::vector<setting_change> out;
  for (auto& [key, value] : after) {
    auto i = old_values.find(key);
    if (i == old_values.end()) {
      out.push_back({key, "", value});
      continue;
    }
    if (i->second != value)
      out.push_back({key, i->second, value});
    old_values.erase(i);
  }
  // Keys only `a` has (handler parameters b dropped), in a's order.
  for (auto& [key, value] : before)
    if (old_values.count(key) != 0)
      out.push_back({key, value, ""});
  return out;
}

std::string describe_non_defaults(const settings& s) {
  std::string line = "settings (" + s.origin + ")";
  auto changed = differences(settings{}, s);
  if (changed.empty())
    return line + ": all defaults";
  line += " differ from the defaults: ";
  bool first = true;
  for (auto& c : changed) {
    line += (first ? "" : ", ") + c.key + " = "
            + (c.after.empty() ? std::string{"(default)"} : c.after);
    first = false;
  }
  return line;
}

} // namespace keylane
