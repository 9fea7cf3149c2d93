// SPDX-License-Identifier: Apache-2.0
// exchange: a FIX 4.4 order-entry server with one order book per symbol on
// keylane lanes, a shared risk actor, and the single-matcher baseline
// behind `--matcher single` (see docs/exchange.md).

#include <atomic>
#include <cstdio>
#include <iostream>

#include <keylane/errc.hpp>

#include "control_signals.hpp"
#include "fix/fix_gateway.hpp"
#include "journal.hpp"
#include "layered_settings.hpp"
#include "matcher.hpp"
#include "options.hpp"
#include "reference.hpp"
#include "report_out.hpp"

namespace {

using namespace exchange;

int run_verify(const options& opts) {
  journal_contents j;
  std::string error;
  if (!read_journal(opts.verify, j, error)) {
    std::cerr << "exchange: " << error << "\n";
    return 2;
  }
  if (j.cut_line != 0)
    std::cerr << "exchange: " << opts.verify << ":" << j.cut_line
              << ": incomplete last line skipped (its writer stopped in "
                 "the middle of it)\n";
  auto res = verify_journal(j);
  if (opts.json) {
    std::printf("{\"symbols\":%llu,\"requests\":%llu,\"reports\":%llu,"
                "\"fills\":%llu,\"mismatches\":%llu}\n",
                static_cast<unsigned long long>(res.symbols),
                static_cast<unsigned long long>(res.orders),
                static_cast<unsigned long long>(res.reports),
                static_cast<unsigned long long>(res.fills),
                static_cast<unsigned long long>(res.mismatch_count));
  } else {
    std::printf("verified %llu symbols, %llu requests, %llu reports, %llu "
                "fill reports: %s\n",
                static_cast<unsigned long long>(res.symbols),
                static_cast<unsigned long long>(res.orders),
                static_cast<unsigned long long>(res.reports),
                static_cast<unsigned long long>(res.fills),
                res.mismatch_count == 0 ? "all match the reference"
                                        : "MISMATCHES");
  }
  for (auto& m : res.mismatches)
    std::cerr << "  " << m << "\n";
  return res.mismatch_count == 0 ? 0 : 1;
}

keylane::settings defaults() {
  keylane::settings s;
  s.order = keylane::order_mode::per_key;
  s.max_active_keys = 1024;
  s.park = keylane::park_mode::none;
  s.output_thread = keylane::output_thread::sink;
  return s;
}

void print_counts(const options& opts, const report_counts& c,
                  const book_counts& b, const gateway_stats& g) {
  auto u = [](uint64_t x) { return static_cast<unsigned long long>(x); };
  if (opts.json) {
    std::printf(
      "{\"matcher\":\"%s\",\"symbols\":%u,\"requests\":%llu,"
      "\"early_rejects\":%llu,\"reports\":%llu,\"fills\":%llu,"
      "\"risk_rejects\":%llu,\"failures\":%llu,\"retires\":%llu,"
      "\"resting_kept_across_retires\":%llu,\"books_restored\":%llu,"
      "\"fills_refused\":%llu,\"fix\":{\"requests\":%llu,\"reports\":%llu,\"session_rejects\":%llu,"
      "\"business_rejects\":%llu,\"logons\":%llu,\"logouts\":%llu,"
      "\"unsent\":%llu,\"slow_dropped\":%llu,\"slow_cut\":%llu,"
      "\"connections\":%llu,\"oversized_cut\":%llu,\"pre_logon_cut\":%llu,"
      "\"logon_timeout_cut\":%llu,\"discarded_bytes\":%llu,"
      "\"unread_cut\":%llu}}\n",
      opts.matcher.c_str(), opts.books.symbols, u(c.requests),
      u(c.early_rejects), u(c.reports), u(c.fills), u(c.risk_rejects),
      u(c.failures), u(b.retires), u(b.resting_kept), u(b.restored),
      u(b.fills_refused), u(g.requests), u(g.reports), u(g.session_rejects),
      u(g.business_rejects), u(g.logons), u(g.logouts), u(g.unsent),
      u(g.slow_dropped), u(g.slow_cut), u(g.connections), u(g.oversized_cut),
      u(g.pre_logon_cut), u(g.logon_timeout_cut), u(g.discarded_bytes),
      u(g.unread_cut));
    return;
  }
  std::printf("matcher %s: %llu requests answered (%llu rejected before a "
              "book, %llu by risk, %llu failed), %llu reports, %llu fill "
              "reports\n",
              opts.matcher.c_str(), u(c.requests), u(c.early_rejects),
              u(c.risk_rejects), u(c.failures), u(c.reports), u(c.fills));
  if (opts.matcher == "keylane")
    std::printf("books: %llu retires kept %llu resting orders; %llu "
                "activations restored a book; %llu fills not told to "
                "their accounts\n",
                u(b.retires), u(b.resting_kept), u(b.restored),
                u(b.fills_refused));
  std::printf("fix: %llu requests, %llu reports (%llu unsent), %llu session "
              "rejects, %llu business rejects, %llu logons, %llu logouts; "
              "%llu reports dropped for clients that did not read, %llu "
              "connections cut for it\n",
              u(g.requests), u(g.reports), u(g.unsent), u(g.session_rejects),
              u(g.business_rejects), u(g.logons), u(g.logouts),
              u(g.slow_dropped), u(g.slow_cut));
  std::printf("connections: %llu accepted; dropped %llu for a BodyLength past "
              "the limit, %llu before logon (bytes, garbled, not a Logon), "
              "%llu for no Logon in time, %llu for not reading; %llu bytes "
              "discarded\n",
              u(g.connections), u(g.oversized_cut), u(g.pre_logon_cut),
              u(g.logon_timeout_cut), u(g.unread_cut), u(g.discarded_bytes));
}

} // namespace

int main(int argc, char** argv) {
  keylane::cli::block_control_signals();
  auto opts = parse_args(argc, argv);
  if (!opts.verify.empty())
    return run_verify(opts);
  auto cfg = keylane::cli::layered_settings(defaults(), opts.config,
                                            opts.overrides);
  if (!cfg) {
    std::cerr << "exchange: " << keylane::render(cfg.error()) << "\n";
    return 2;
  }
  keylane::cli::print_config_if(opts.print_config, *cfg);
  if (cfg->order == keylane::order_mode::none) {
    std::cerr << "exchange: runtime.order = \"none\" would let a symbol's "
                 "reports overtake each other; use \"per_key\"\n";
    return 2;
  }
  journal_writer journal;
  std::string error;
  if (!opts.journal.empty() && !journal.open(opts.journal, error)) {
    std::cerr << "exchange: " << error << "\n";
    return 2;
  }
  // Reports can be produced only after the gateway passed a request on, so
  // the pointer is set before any report needs it.
  std::atomic<fix_gateway*> gateway{nullptr};
  report_out out{[&](const exec_report& r) {
                   if (auto* g = gateway.load(std::memory_order_acquire))
                     g->send(r);
                 },
                 journal};
  std::unique_ptr<matcher> m;
  if (opts.matcher == "keylane") {
    auto started = start_keylane_matcher(*cfg, opts.books, out);
    if (!started) {
      std::cerr << "exchange: " << keylane::render(started.error()) << "\n";
      return 2;
    }
    m = std::move(*started);
  } else {
    m = start_single_matcher(opts.books, out);
  }
  keylane::cli::control_signals signals{[] {}};
  auto fix = fix_gateway::start(
    opts.fix_config, opts.port, opts.session_queue, opts.fix_limits,
    [&](order_request&& rq) { m->take(std::move(rq)); }, error);
  if (!fix) {
    std::cerr << "exchange: " << error << "\n";
    m->stop();
    return 3;
  }
  gateway.store(fix.get(), std::memory_order_release);
  std::fprintf(stderr,
               "exchange: FIX 4.4 acceptor up (%s), matcher %s, %u symbols, "
               "risk %s\n",
               opts.port ? ("port " + std::to_string(opts.port)).c_str()
                         : "port of the settings file",
               opts.matcher.c_str(), opts.books.symbols,
               opts.books.risk
                 ? (std::to_string(opts.books.risk_cfg.min_delay_us) + "-"
                    + std::to_string(opts.books.risk_cfg.max_delay_us) + " us")
                     .c_str()
                 : "off");
  auto signo = signals.serve();
  std::fprintf(stderr, "exchange: %s, finishing\n",
               keylane::cli::signal_name(signo));
  bool drained = m->drain(std::chrono::seconds(10));
  fix->stop();
  auto books = m->books();
  m->stop();
  auto stats = fix->stats();
  gateway.store(nullptr, std::memory_order_release);
  bool journaled = journal.close();
  print_counts(opts, out.counts(), books, stats);
  if (!drained)
    std::cerr << "exchange: requests were still open after 10 s\n";
  if (!journaled)
    std::cerr << "exchange: the journal could not be written in full\n";
  return drained && journaled ? 0 : 1;
}
