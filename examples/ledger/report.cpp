// SPDX-License-Identifier: Apache-2.0
#include "report.hpp"

#include <cstdio>
#include <string>

#include "format.hpp"
#include "model.hpp"
#include "ways.hpp"

namespace ledger {

namespace {

const way_result* find(const std::vector<way_result>& ways, const char* name) {
  for (const auto& w : ways)
    if (w.name == name)
      return &w;
  return nullptr;
}

} // namespace

void print_table(std::ostream& out, const workload& w,
                 const keylane::settings& cfg,
                 const std::vector<way_result>& ways) {
  const auto& s = w.spec;
  out << format("ledger: %zu events over %u accounts (%s hot with %u), "
                "%.0f-%.0f ms database round trip each, seed %llu\n",
                w.events.size(), s.accounts, w.names[hot_account].c_str(),
                s.hot_events, s.min_latency.count() / 1000.0,
                s.max_latency.count() / 1000.0,
                static_cast<unsigned long long>(s.seed));
  auto threads = cfg.threads == 0 ? std::string{"one per hardware thread"}
                                   : std::to_string(cfg.threads);
  out << format("key_lanes: max_active_keys = %zu, scheduler = %s, threads = "
                "%s, settings from %s\n\n",
                cfg.max_active_keys, keylane::to_string(cfg.scheduler),
                threads.c_str(), cfg.origin.c_str());
  out << format("%-16s %6s %10s %8s %12s %10s %9s %8s\n", "way", "events",
                "violations", "rejected", "cold median", "cold last",
                "hot last", "total");
  for (const auto& r : ways)
    out << format("%-16s %6llu %10llu %8llu %10.3f s %8.3f s %7.3f s "
                  "%6.3f s\n",
                  r.name.c_str(), static_cast<unsigned long long>(r.events),
                  static_cast<unsigned long long>(r.violations),
                  static_cast<unsigned long long>(r.business_errors),
                  r.cold_median_s, r.cold_last_s, r.hot_last_s, r.total_s);
  // The reference: the same events with no runtime cost (model.hpp).
  auto parts_model = model_hash_partitions(w, worker_count);
  auto lanes_model = model_key_lanes(w, cfg.max_active_keys);
  out << format("\nmodel:     cold last %.3f s with hash_partitions, %.3f s "
                "with key_lanes; cold median %.3f s and %.3f s\n"
                "           (the same events at no runtime cost); "
                "shared_queue reorders (violations > 0),\n"
                "           the others do not\n",
                parts_model.cold_last_s, lanes_model.cold_last_s,
                parts_model.cold_median_s, lanes_model.cold_median_s);
  auto parts = find(ways, "hash_partitions");
  auto lanes = find(ways, "key_lanes");
  if (parts && lanes && lanes->cold_last_s > 0)
    out << format("measured:  key_lanes' last cold account finished %.1fx "
                  "earlier than hash_partitions'\n",
                  parts->cold_last_s / lanes->cold_last_s);
}

void print_json(std::ostream& out, const std::vector<way_result>& ways) {
  out << '{';
  for (size_t i = 0; i < ways.size(); ++i) {
    const auto& r = ways[i];
    out << (i == 0 ? "" : ", ")
        << format("\"%s\": {\"violations\": %llu, \"business_errors\": %llu, "
                  "\"cold_median_s\": %.6f, \"cold_last_s\": %.6f, "
                  "\"hot_last_s\": %.6f, \"total_s\": %.6f, \"events\": %llu}",
                  r.name.c_str(), static_cast<unsigned long long>(r.violations),
                  static_cast<unsigned long long>(r.business_errors),
                  r.cold_median_s, r.cold_last_s, r.hot_last_s, r.total_s,
                  static_cast<unsigned long long>(r.events));
  }
  out << "}\n";
}

} // namespace ledger
