// SPDX-License-Identifier: Apache-2.0
#include "retry_report.hpp"

#include <cstdio>
#include <string>

#include "format.hpp"

namespace ledger {

namespace {

std::string quoted(const std::string& s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    if (c == '"' || c == '\\')
      out += {'\\', static_cast<char>(c)};
    else if (c < 0x20)
      out += format("\\u%04x", c);
    else
      out += static_cast<char>(c);
  }
  return out + '"';
}

const char* boolean(bool x) {
  return x ? "true" : "false";
}

unsigned long long ull(uint64_t x) {
  return static_cast<unsigned long long>(x);
}

// The first output of `out` with `status`, or null.
const output_record* first_with(const std::vector<output_record>& out,
                                keylane::outcome status) {
  for (const auto& r : out)
    if (r.status == status)
      return &r;
  return nullptr;
}

size_t count_ok(const std::vector<output_record>& out, bool first_attempt) {
  size_t n = 0;
  for (const auto& r : out)
    n += r.status == keylane::outcome::ok && (!first_attempt || r.attempts == 1);
  return n;
}

} // namespace

void print_retry_text(std::ostream& out, const retry_spec& spec,
                      const retry_observed& obs, const retry_verdict& v) {
  const auto& w = obs.w;
  const auto& cfg = obs.cfg;
  const auto& flaky = w.names[spec.transient_account];
  const auto& broken = w.names[spec.permanent_account];
  out << format("ledger retry: %zu events over %u accounts (%u each), "
                "%.0f-%.0f ms database round trip each, seed %llu\n",
                w.events.size(), spec.accounts, spec.events_per_account,
                w.spec.min_latency.count() / 1000.0,
                w.spec.max_latency.count() / 1000.0, ull(spec.seed));
  out << format("policy: up to %zu attempts, backoff %zu ms x %g up to %zu "
                "ms (jitter %s), park store %s; settings from %s\n",
                cfg.max_attempts, cfg.initial_backoff_ms,
                cfg.backoff_multiplier, cfg.max_backoff_ms,
                keylane::to_string(cfg.jitter), keylane::to_string(cfg.park),
                cfg.origin.c_str());
  out << format("faults: %s #%u fails %u times (retryable), %s #%u fails "
                "for good until fixed\n\n",
                flaky.c_str(), spec.transient_index, spec.transient_failures,
                broken.c_str(), spec.permanent_index);

  const auto& f = obs.first_pass.at(spec.transient_account);
  for (const auto& r : f)
    if (r.index == spec.transient_index)
      out << format("%-8s #%u %s after %u attempts, retried at the head of "
                    "its lane; %zu of %zu events ok\n",
                    flaky.c_str(), r.index, keylane::to_string(r.status),
                    r.attempts, count_ok(f, false), f.size());

  const auto& b = obs.first_pass.at(spec.permanent_account);
  auto first_parked = first_with(b, keylane::outcome::parked);
  out << format("%-8s %zu events parked, tombstones out in order (first: "
                "%s)\n",
                broken.c_str(), b.size() - count_ok(b, false),
                first_parked ? first_parked->error.c_str() : "none");
  std::string listed;
  for (const auto& ev : obs.parked_list)
    listed += format(" #%u", ev.index);
  out << format("%-8s parked_events lists%s: %s\n", "",
                listed.empty() ? " nothing" : listed.c_str(),
                v.parked_list_matches ? "its submitted events, in order"
                                      : "NOT its submitted events in order");

  size_t others = 0, other_events = 0, other_clean = 0;
  for (uint32_t a = 0; a < obs.first_pass.size(); ++a) {
    if (a == spec.transient_account || a == spec.permanent_account)
      continue;
    ++others;
    other_events += obs.first_pass[a].size();
    other_clean += count_ok(obs.first_pass[a], true);
  }
  out << format("%-8s %zu accounts: %zu of %zu events ok at the first "
                "attempt\n",
                "others", others, other_clean, other_events);

  const auto& r = obs.replay_pass.at(spec.permanent_account);
  out << format("%-8s fault cleared; replay(\"%s\") resubmitted %llu, %zu "
                "ok%s; %s\n",
                "replay", broken.c_str(), ull(obs.replayed),
                count_ok(r, false),
                v.replayed_in_order ? " in order" : " (NOT as expected)",
                obs.parked_after.empty() ? "nothing parked now"
                                         : "still parked keys left");
  out << format("%-8s ok %llu, parked %llu, replayed %llu, retries %llu; "
                "first pass %.3f s, replay %.3f s\n\n",
                "stats", ull(obs.stats.ok), ull(obs.stats.parked),
                ull(obs.stats.replayed), ull(obs.stats.retries),
                obs.first_pass_s, obs.replay_s);

  out << "per-account order " << (v.order_kept ? "kept" : "BROKEN")
      << " across retries, parking and replay\n";
  if (v.as_expected()) {
    out << "result: as expected\n";
    return;
  }
  out << format("result: %zu differences from the expectation:\n",
                v.problems.size());
  for (const auto& p : v.problems)
    out << "  - " << p << '\n';
}

void print_retry_json(std::ostream& out, const retry_observed& obs,
                      const retry_verdict& v) {
  out << "{\"order_kept\": " << boolean(v.order_kept) << ", \"parked\": {";
  for (size_t i = 0; i < v.parked.size(); ++i)
    out << (i == 0 ? "" : ", ") << quoted(v.parked[i].first) << ": "
        << v.parked[i].second;
  out << "}, \"retried\": {";
  bool first = true;
  for (const auto& [a, n] : v.retried) {
    out << (first ? "" : ", ") << quoted(obs.w.names.at(a)) << ": " << n;
    first = false;
  }
  out << "}, \"replayed_in_order\": " << boolean(v.replayed_in_order);
  out << format(", \"as_expected\": %s, \"events\": %llu, \"ok\": %llu, "
                "\"parked_tombstones\": %llu, \"replayed\": %llu, "
                "\"other_accounts_ok\": %s, \"parked_list_matches\": %s, "
                "\"store_empty_after_replay\": %s, \"first_pass_s\": %.6f, "
                "\"replay_s\": %.6f, \"problems\": [",
                boolean(v.as_expected()), ull(v.events), ull(v.ok),
                ull(v.parked_tombstones), ull(v.replayed),
                boolean(v.other_accounts_ok), boolean(v.parked_list_matches),
                boolean(v.store_empty_after_replay), obs.first_pass_s,
                obs.replay_s);
  for (size_t i = 0; i < v.problems.size(); ++i)
    out << (i == 0 ? "" : ", ") << quoted(v.problems[i]);
  out << "]}\n";
}

} // namespace ledger
