// SPDX-License-Identifier: Apache-2.0
// The ledger: why per-key lanes. One workload of account events (half of
// them on one hot account, each a 1-4 ms database round trip) runs three
// ways — a shared queue, hash partitions, keylane lanes — and the program
// shows which ways keep each account's order and how long the hot account
// makes the others wait. The retry scenario shows what lanes do with
// failures: retry at the head of a lane, park in order, replay. With
// --serve the lanes' runtime stays up afterwards (metrics endpoint, SIGHUP
// reloads the config file) until SIGINT or SIGTERM.

#include <iostream>
#include <string>
#include <vector>

#include <keylane/errc.hpp>

#include <control_signals.hpp>
#include <layered_settings.hpp>
#include <progress.hpp>

#include "lane_settings.hpp"
#include "live_lanes.hpp"
#include "options.hpp"
#include "report.hpp"
#include "retry_report.hpp"
#include "retry_scenario.hpp"
#include "retry_verdict.hpp"
#include "sighup.hpp"
#include "ways.hpp"
#include "workload.hpp"

namespace {

using keylane::cli::progress;
using ledger::options;

keylane::settings load_settings(const options& opts) {
  keylane::settings cfg;
  auto problems = ledger::read_settings(opts.settings, cfg);
  if (!problems.empty()) {
    for (const auto& p : problems)
      std::cerr << "ledger: " << p << '\n';
    std::exit(2);
  }
  return cfg;
}

// The ordered ways must have kept every account's order and applied every
// event; says what went wrong on stderr.
bool check(const ledger::way_result& r, size_t events) {
  bool good = true;
  auto fail = [&](const std::string& what) {
    std::cerr << "ledger: " << r.name << ": " << what << '\n';
    good = false;
  };
  if (r.events != events)
    fail(std::to_string(r.events) + " of " + std::to_string(events)
         + " events finished");
  if (r.violations != 0)
    fail(std::to_string(r.violations) + " order violations");
  if (r.business_errors != 0)
    fail(std::to_string(r.business_errors) + " rejected business events");
  return good;
}

// The hot scenario: the three ways side by side.
int run_hot(const options& opts, const keylane::settings& cfg,
            ledger::live_lanes& live) {
  ledger::workload_spec spec;
  spec.seed = opts.seed;
  auto w = ledger::make_workload(spec);

  progress shown{"ledger", 3 * w.events.size(), "events",
                 keylane::cli::progress_wanted(opts.json)};
  std::vector<ledger::way_result> ways;
  ways.push_back(ledger::run_shared_queue(w, &shown));
  ways.push_back(ledger::run_hash_partitions(w, &shown));
  auto lanes = ledger::run_key_lanes(w, cfg, live, &shown);
  shown.finish();
  if (!lanes) {
    std::cerr << "ledger: " << keylane::render(lanes.error()) << '\n';
    return 1;
  }
  ways.push_back(std::move(*lanes));

  if (opts.json)
    ledger::print_json(std::cout, ways);
  else
    ledger::print_table(std::cout, w, cfg, ways);

  bool ordered = check(ways[1], w.events.size());
  ordered = check(ways[2], w.events.size()) && ordered;
  return ordered ? 0 : 1;
}

// The retry scenario: failures injected, parked, replayed, and checked.
int run_retry(const options& opts, const keylane::settings& cfg,
              ledger::live_lanes& live) {
  ledger::retry_spec spec;
  spec.seed = opts.seed;
  progress shown{"ledger", ledger::expected_outputs(spec), "events",
                 keylane::cli::progress_wanted(opts.json)};
  auto obs = ledger::run_retry_scenario(spec, cfg, live, &shown);
  shown.finish();
  if (!obs) {
    std::cerr << "ledger: " << keylane::render(obs.error()) << '\n';
    return 1;
  }
  auto verdict = ledger::judge(spec, *obs);
  if (opts.json) {
    ledger::print_retry_json(std::cout, *obs, verdict);
    // The JSON lists them too; stderr is where a person looks first.
    for (const auto& p : verdict.problems)
      std::cerr << "ledger: retry: " << p << '\n';
  } else {
    ledger::print_retry_text(std::cout, spec, *obs, verdict);
  }
  return verdict.as_expected() ? 0 : 1;
}

// --serve: the runtime the scenario ran stays up, idle, until SIGINT or
// SIGTERM.
void serve(const options& opts, ledger::live_lanes& live,
           keylane::cli::control_signals& signals) {
  std::string listen;
  if (!live.visit([&](ledger::ledger_runtime& rt) {
        listen = rt.config().metrics_listen;
      })) {
    std::cerr << "ledger: --serve: no keylane runtime to keep up (the lanes "
                 "did not start or failed)\n";
    return;
  }
  std::string line = "ledger: serving; ";
  if (!listen.empty())
    line += "metrics at http://" + listen + "/metrics; ";
  if (opts.settings.config)
    line += "SIGHUP reloads " + *opts.settings.config + "; ";
  else
    line += "SIGHUP: no --config to reload; ";
  line += "SIGINT/SIGTERM to stop\n";
  std::cout << std::flush; // the report first, when both go to one file
  std::cerr << line << std::flush;
  int sig = signals.serve();
  std::cerr << "ledger: " << keylane::cli::signal_name(sig)
            << ": stopping\n" << std::flush;
  live.stop();
}

} // namespace

int main(int argc, char** argv) {
  // Before any thread exists, so that every thread inherits the mask and
  // only the signal thread below takes these signals.
  keylane::cli::block_control_signals();
  auto opts = ledger::parse_args(argc, argv);
  auto cfg = load_settings(opts);
  keylane::cli::print_config_if(opts.print_config, cfg);

  ledger::live_lanes live;
  // Declared after `live`, so it ends (and no SIGHUP reaches `live`) first.
  keylane::cli::control_signals signals{
    [&] { ledger::reload_on_sighup(opts.settings, live); }};

  int status = opts.which == ledger::scenario::retry ? run_retry(opts, cfg, live)
                                                     : run_hot(opts, cfg, live);
  if (opts.serve)
    serve(opts, live, signals);
  live.stop();
  return status;
}
