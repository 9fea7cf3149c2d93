// SPDX-License-Identifier: Apache-2.0
#include "report.hpp"

#include <cstdio>
#include <string>

namespace pipeline_example {

namespace {

std::string fixed(double x, int digits) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.*f", digits, x);
  return buf;
}

std::string pad(std::string s, size_t n) {
  if (s.size() < n)
    s.append(n - s.size(), ' ');
  return s;
}

} // namespace

void print_table(std::ostream& out, const std::vector<mode_result>& rows,
                 uint64_t items) {
  out << items << " items, 2 stages of 8 in flight, output in global order\n\n"
      << pad("mode", 22) << pad("total", 9) << pad("first", 9)
      << pad("held after 1", 14) << pad("held at sink", 14)
      << pad("tombstones", 12) << pad("violations", 12)
      << pad("mismatches", 12) << "reference\n";
  for (auto& r : rows) {
    if (!r.error.empty()) {
      out << pad(r.mode, 22) << "failed: " << r.error << '\n';
      continue;
    }
    // The re-sequencer after stage 1 is the one in front of stage 2.
    auto after1 = r.stage_peaks.size() > 1 ? r.stage_peaks[1] : 0;
    out << pad(r.mode, 22) << pad(fixed(r.total_s, 2) + " s", 9)
        << pad(fixed(r.first_result_s, 3) + " s", 9)
        << pad(std::to_string(after1), 14)
        << pad(std::to_string(r.peak_buffered), 14)
        << pad(std::to_string(r.tombstones), 12)
        << pad(std::to_string(r.violations), 12)
        << pad(std::to_string(r.mismatches), 12) << r.reference << '\n';
  }
}

void print_json(std::ostream& out, const std::vector<mode_result>& rows) {
  for (auto& r : rows) {
    out << "{\"mode\":\"" << r.mode << "\",\"total_s\":" << fixed(r.total_s, 4)
        << ",\"first_result_s\":" << fixed(r.first_result_s, 4)
        << ",\"peak_buffered\":" << r.peak_buffered << ",\"stage_peaks\":[";
    for (size_t i = 0; i < r.stage_peaks.size(); ++i)
      out << (i ? "," : "") << r.stage_peaks[i];
    out << "],\"tombstones\":" << r.tombstones
        << ",\"violations\":" << r.violations
        << ",\"mismatches\":" << r.mismatches;
    if (r.model)
      out << ",\"model_total_s\":" << fixed(r.model->total_s, 4)
          << ",\"model_held_after_1\":" << r.model->held_after_1
          << ",\"model_held_at_sink\":" << r.model->held_at_sink;
    if (!r.error.empty())
      out << ",\"error\":\"" << r.error << '"';
    out << "}\n";
  }
}

} // namespace pipeline_example
