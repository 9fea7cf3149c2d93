// SPDX-License-Identifier: Apache-2.0
#include "report.hpp"

#include <cstdio>
#include <string>

namespace ordered_export {

namespace {

/// printf into a std::string.
template <class... Ts>
std::string format(const char* fmt, Ts... xs) {
  std::string buf(static_cast<size_t>(std::snprintf(nullptr, 0, fmt, xs...)),
                  '\0');
  std::snprintf(buf.data(), buf.size() + 1, fmt, xs...);
  return buf;
}

std::string reference_text(const mode_result& r) {
  if (!r.ref)
    return "-";
  if (r.ref->peak == 0)
    return format("%.2f s, nothing held", r.ref->total_s);
  return format("%.2f s, peak %zu", r.ref->total_s, r.ref->peak);
}

const mode_result* find(const std::vector<mode_result>& rows,
                        const std::string& prefix, const std::string& suffix) {
  for (const auto& r : rows)
    if (r.name.compare(0, prefix.size(), prefix) == 0
        && r.name.size() >= suffix.size()
        && r.name.compare(r.name.size() - suffix.size(), suffix.size(),
                          suffix)
             == 0)
      return &r;
  return nullptr;
}

// "within 10 % of the unbounded buffer (2.31 s vs 2.19 s), peak 64 <= 64".
std::string against(const mode_result& r, const mode_result& base,
                    uint64_t bound) {
  auto ratio = base.total_s > 0 ? r.total_s / base.total_s : 0.0;
  return format("%s 10 %% of the unbounded buffer (%.2f s vs %.2f s, %+.0f %%), "
                "peak %llu %s %llu",
                ratio <= 1.10 ? "within" : "NOT within", r.total_s,
                base.total_s, (ratio - 1.0) * 100.0,
                static_cast<unsigned long long>(r.peak_buffered),
                r.peak_buffered <= bound ? "<=" : "EXCEEDS",
                static_cast<unsigned long long>(bound));
}

} // namespace

void print_table(std::ostream& out, const workload_spec& spec, uint64_t slots,
                 const std::vector<mode_result>& rows) {
  out << format("ordered_export: %llu rows, %llu in flight, %llu stragglers "
                "of %lld ms, the rest %lld ms (seed %llu)\n\n",
                static_cast<unsigned long long>(spec.items),
                static_cast<unsigned long long>(slots),
                static_cast<unsigned long long>(stragglers(spec)),
                static_cast<long long>(spec.slow.count() / 1000),
                static_cast<long long>(spec.fast.count() / 1000),
                static_cast<unsigned long long>(spec.seed));
  out << format("%-34s %8s %8s %6s %8s %6s %6s %6s   %s\n", "mode", "total s",
                "first s", "peak", "spilled", "idle", "tombs", "order",
                "model (same rows, ideal slots)");
  for (const auto& r : rows)
    out << format("%-34s %8.2f %8.3f %6llu %8llu %5.0f%% %6llu %6llu   %s\n",
                  r.title.c_str(), r.total_s, r.first_result_s,
                  static_cast<unsigned long long>(r.peak_buffered),
                  static_cast<unsigned long long>(r.spilled),
                  r.idle_share * 100.0,
                  static_cast<unsigned long long>(r.tombstones),
                  static_cast<unsigned long long>(r.violations),
                  reference_text(r).c_str());
  out << "\npeak: most results held in memory; idle: share of the lane "
         "slots' time no call held;\ntombs: tombstones; order: outputs out "
         "of the mode's order (must be 0)\n";
  auto base = find(rows, "global_unbounded", "");
  auto spill = find(rows, "global_window_", "_spill");
  auto automatic = find(rows, "global_auto", "");
  if (base && spill)
    out << "spill: " << against(*spill, *base, spill->window) << '\n';
  if (base && automatic)
    out << "auto:  " << against(*automatic, *base, automatic->window_max)
        << " (window_max)\n";
}

void print_json(std::ostream& out, const std::vector<mode_result>& rows) {
  for (const auto& r : rows)
    out << format("{\"mode\": \"%s\", \"total_s\": %.3f, "
                  "\"first_result_s\": %.3f, \"peak_buffered\": %llu, "
                  "\"spilled\": %llu, \"idle_share\": %.3f, "
                  "\"tombstones\": %llu, \"violations\": %llu}\n",
                  r.name.c_str(), r.total_s, r.first_result_s,
                  static_cast<unsigned long long>(r.peak_buffered),
                  static_cast<unsigned long long>(r.spilled), r.idle_share,
                  static_cast<unsigned long long>(r.tombstones),
                  static_cast<unsigned long long>(r.violations));
}

} // namespace ordered_export
