// SPDX-License-Identifier: Apache-2.0
#include "load_report.hpp"

#include <cstdio>

namespace exchange {
namespace load {

namespace {

struct figures {
  uint64_t unanswered;
  double orders_per_s, fills_per_s, traded_share;
  double p50, p99, p999, max;  // microseconds
};

figures figures_of(const run_result& r) {
  const tracker_totals& t = r.totals;
  figures f;
  f.unanswered = t.sent - t.answered;
  double s = r.send_s > 0 ? r.send_s : 1;
  f.orders_per_s = static_cast<double>(t.sent) / s;
  f.fills_per_s = static_cast<double>(t.fills) / s;
  f.traded_share = t.sent_new ? static_cast<double>(t.traded_orders) / static_cast<double>(t.sent_new) : 0;
  f.p50 = static_cast<double>(t.latency.quantile(0.50)) / 1e3;
  f.p99 = static_cast<double>(t.latency.quantile(0.99)) / 1e3;
  f.p999 = static_cast<double>(t.latency.quantile(0.999)) / 1e3;
  f.max = static_cast<double>(t.latency.max()) / 1e3;
  return f;
}

unsigned long long u(uint64_t v) { return static_cast<unsigned long long>(v); }

} // namespace

std::vector<std::string> verdict(const run_result& r) {
  std::vector<std::string> why;
  const tracker_totals& t = r.totals;
  if (!r.error.empty())
    why.push_back(r.error);
  if (t.sent != t.answered)
    why.push_back(std::to_string(t.sent - t.answered) + " requests unanswered ("
                  + std::to_string(t.send_failures) + " not sent: session down)");
  if (t.out_of_sequence() > 0)
    why.push_back(std::to_string(t.out_of_sequence()) + " reports out of sequence: "
                  + std::to_string(t.after_terminal) + " after the order ended, "
                  + std::to_string(t.cum_decreased) + " CumQty decreasing, "
                  + std::to_string(t.wrong_first) + " wrong first report, "
                  + std::to_string(t.seq_not_increasing) + " tag 20001 not increasing, "
                  + std::to_string(t.unknown_order) + " for an unknown ClOrdID");
  for (const auto& e : t.examples)
    why.push_back("  e.g. " + e);
  if (r.malformed_reports > 0)
    why.push_back(std::to_string(r.malformed_reports)
                  + " server messages were malformed (this client answered them with a Reject)");
  if (r.session_errors > 0)
    why.push_back(std::to_string(r.session_errors) + " logouts/disconnects during the run");
  return why;
}

void print_report(const load_options& o, const run_result& r) {
  const tracker_totals& t = r.totals;
  figures f = figures_of(r);
  if (o.json) {
    std::printf(
      "{\"seed\":%llu,\"sessions\":%d,\"rate\":%.0f,\"duration_s\":%.3f,"
      "\"sent\":%llu,\"answered\":%llu,\"unanswered\":%llu,\"orders_per_s\":%.1f,"
      "\"latency_us\":{\"p50\":%.1f,\"p99\":%.1f,\"p999\":%.1f,\"max\":%.1f},"
      "\"fills\":%llu,\"fills_per_s\":%.1f,\"traded_share\":%.4f,\"rejects\":%llu,"
      "\"cancel_rejects\":%llu,\"session_rejects\":%llu,\"business_rejects\":%llu,"
      "\"out_of_sequence\":%llu,\"session_errors\":%llu,\"malformed_reports\":%llu,"
      "\"new\":%llu,\"cancel\":%llu,\"replace\":%llu,\"send_failures\":%llu,\"earlier_run_reports\":%llu,"
      "\"slow_reader_sent\":%llu,\"hot_symbol\":\"%s\",\"drain_s\":%.3f,\"ok\":%s}\n",
      u(o.seed), o.sessions, o.rate, r.send_s, u(t.sent), u(t.answered),
      u(f.unanswered), f.orders_per_s, f.p50, f.p99, f.p999, f.max, u(t.fills),
      f.fills_per_s, f.traded_share, u(t.rejects), u(t.cancel_rejects),
      u(t.session_rejects), u(t.business_rejects), u(t.out_of_sequence()),
      u(r.session_errors), u(r.malformed_reports), u(t.sent_new), u(t.sent_cancel), u(t.sent_replace),
      u(t.send_failures), u(t.earlier_run_reports), u(r.slow_reader_sent),
      r.hot_symbol.c_str(), r.drain_s,
      verdict(r).empty() ? "true" : "false");
    return;
  }
  std::printf("order_entry_load  seed %llu  %d sessions  %.0f orders/s for %.1f s"
              "  hot symbol %s (%.0f %%)\n",
              u(o.seed), o.sessions, o.rate, r.send_s, r.hot_symbol.c_str(),
              o.hot_share * 100);
  std::printf("  sent          %10llu  (new %llu, cancel %llu, replace %llu)\n",
              u(t.sent), u(t.sent_new), u(t.sent_cancel), u(t.sent_replace));
  std::printf("  answered      %10llu  unanswered %llu\n", u(t.answered), u(f.unanswered));
  std::printf("  orders/s      %10.1f\n", f.orders_per_s);
  std::printf("  latency us    p50 %.1f  p99 %.1f  p99.9 %.1f  max %.1f"
              "  (scheduled send -> first report)\n", f.p50, f.p99, f.p999, f.max);
  std::printf("  fills         %10llu  (%.1f/s)  traded share %.1f %%\n", u(t.fills),
              f.fills_per_s, f.traded_share * 100);
  std::printf("  rejects       %10llu  cancel rejects %llu  session rejects %llu"
              "  business rejects %llu\n", u(t.rejects), u(t.cancel_rejects),
              u(t.session_rejects), u(t.business_rejects));
  std::printf("  out of seq    %10llu  session errors %llu  malformed reports %llu\n",
              u(t.out_of_sequence()), u(r.session_errors), u(r.malformed_reports));
}

} // namespace load
} // namespace exchange
