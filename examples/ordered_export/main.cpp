// SPDX-License-Identifier: Apache-2.0
// The ordered export: what ordered output costs when a few calls straggle,
// and the levers against it. 1,000 rows, 8 in flight, 1 % of them 500 ms
// calls and the rest 10 ms, run unordered, in global order with an
// unbounded buffer, with a window of 64, per key, with an automatic window,
// with a window of 64 that spills to disk, and with a window of 64 whose
// stragglers time out into tombstones; for each the total time, the time to
// the first result, the peak results held in memory, the results spilled,
// the worker idle share and the tombstones, next to what the model of the
// same rows on ideal slots gives (model.hpp).
//
// Decisions: "8 in flight" is runtime.max_active_keys = 8. Each row is its
// own key (rows of an export are independent), except in the per-key mode,
// where the key is the row's customer (row % 100) so a customer's rows run
// and come out in order. The calls are asynchronous (a lane timer,
// run_later), so no worker thread sleeps. The stragglers are exactly 1 % of
// the rows, chosen by --seed, the same rows in every mode. The spill mode
// spills into a directory made under /tmp and removed at exit (a run killed
// by a signal before --serve leaves it behind). The timeout mode sets
// retry.attempt_timeout_ms = 100 with one attempt and park.store = "none",
// so a straggler ends as a failed tombstone and the output moves on.
// --config and --set give the base settings of every mode; each mode's own
// keys go on top (see --help). Timing is reported, not asserted: the exit
// status checks only that every row came out once, in the mode's order.

#include <iostream>
#include <string>
#include <vector>

#include <keylane/errc.hpp>

#include <control_signals.hpp>
#include <layered_settings.hpp>
#include <progress.hpp>

#include "export_settings.hpp"
#include "kept_runtime.hpp"
#include "modes.hpp"
#include "options.hpp"
#include "report.hpp"
#include "run_mode.hpp"
#include "temp_dir.hpp"
#include "workload.hpp"

namespace {

using namespace ordered_export;

keylane::settings load_settings(const options& opts) {
  keylane::settings cfg;
  auto problems = read_settings(opts.settings, cfg);
  if (!problems.empty()) {
    for (const auto& p : problems)
      std::cerr << "ordered_export: " << p << '\n';
    std::exit(2);
  }
  return cfg;
}

workload_spec make_spec(const options& opts) {
  workload_spec spec;
  spec.seed = opts.seed;
  if (opts.quick) {
    spec.items = 400;
    spec.fast = std::chrono::milliseconds(2);
    spec.slow = std::chrono::milliseconds(100);
  }
  if (opts.items > 0)
    spec.items = opts.items;
  return spec;
}

// Every row out exactly once and in order; says what went wrong on stderr.
bool check(const mode_result& r, uint64_t items) {
  bool good = true;
  auto fail = [&](const std::string& what) {
    std::cerr << "ordered_export: " << r.name << ": " << what << " (of "
              << items << " rows)\n";
    good = false;
  };
  if (r.violations != 0)
    fail(std::to_string(r.violations) + " outputs out of order");
  if (r.duplicates != 0)
    fail(std::to_string(r.duplicates) + " rows delivered more than once");
  if (r.missing != 0)
    fail(std::to_string(r.missing) + " rows never delivered");
  return good;
}

// SIGHUP: the base settings read again, the kept mode's keys on top.
void reload(const settings_source& src, kept_runtime& kept) {
  if (!src.config) {
    std::cerr << "ordered_export: SIGHUP: no --config file to reload\n";
    return;
  }
  keylane::settings base;
  auto problems = read_settings(src, base);
  for (const auto& p : problems)
    std::cerr << "ordered_export: SIGHUP: reload refused: " << p << '\n';
  if (!problems.empty())
    return;
  bool running = kept.visit([&](export_runtime& rt, const mode& m) {
    auto next = mode_settings(base, m);
    if (!next) {
      std::cerr << "ordered_export: SIGHUP: reload refused: "
                << keylane::render(next.error()) << '\n';
      return;
    }
    // The runtime logs what it applied and what it refused.
    (void) rt.reload(std::move(*next));
  });
  if (!running)
    std::cerr << "ordered_export: SIGHUP: no runtime kept yet\n";
}

void serve(const options& opts, kept_runtime& kept,
           keylane::cli::control_signals& signals) {
  std::string listen;
  if (!kept.visit([&](export_runtime& rt, const mode&) {
        listen = rt.config().metrics_listen;
      })) {
    std::cerr << "ordered_export: --serve: no runtime to keep up\n";
    return;
  }
  std::string line = "ordered_export: serving the last mode's runtime; ";
  if (!listen.empty())
    line += "metrics at http://" + listen + "/metrics; ";
  if (opts.settings.config)
    line += "SIGHUP reloads " + *opts.settings.config + "; ";
  line += "SIGINT/SIGTERM to stop\n";
  std::cout << std::flush; // the report first, when both go to one file
  std::cerr << line << std::flush;
  int sig = signals.serve();
  std::cerr << "ordered_export: " << keylane::cli::signal_name(sig)
            << ": stopping\n"
            << std::flush;
  kept.stop();
}

} // namespace

int main(int argc, char** argv) {
  // Before any thread exists, so that only the signal thread takes them.
  keylane::cli::block_control_signals();
  auto opts = parse_args(argc, argv);
  auto base = load_settings(opts);
  keylane::cli::print_config_if(opts.print_config, base);
  auto spec = make_spec(opts);

  auto dir = temp_dir::make("ordered_export");
  if (!dir) {
    std::cerr << "ordered_export: " << keylane::render(dir.error()) << '\n';
    return 1;
  }
  mode_params params;
  params.spill_dir = dir->path();
  params.attempt_timeout_ms = opts.quick ? 20 : 100;
  auto modes = all_modes(params);
  // Every mode's settings are checked before anything runs.
  std::vector<keylane::settings> configs;
  for (const auto& m : modes) {
    auto cfg = mode_settings(base, m);
    if (!cfg) {
      std::cerr << "ordered_export: mode " << m.name << ": "
                << keylane::render(cfg.error()) << '\n';
      return 2;
    }
    configs.push_back(std::move(*cfg));
  }

  auto items = make_items(spec);
  kept_runtime kept;
  // Declared after `kept`, so it ends (and no SIGHUP reaches `kept`) first.
  keylane::cli::control_signals signals{
    [&] { reload(opts.settings, kept); }};

  keylane::cli::progress shown{"ordered_export",
                               modes.size() * items.size(), "results",
                               keylane::cli::progress_wanted(opts.json)};
  std::vector<mode_result> rows;
  int status = 0;
  for (size_t i = 0; i < modes.size(); ++i) {
    auto r = run_mode(modes[i], configs[i], items, &shown, kept);
    if (!r) {
      shown.say("ordered_export: " + modes[i].name + ": "
                + keylane::render(r.error()) + "\n");
      status = 1;
      continue;
    }
    if (!check(*r, items.size()))
      status = 1;
    rows.push_back(std::move(*r));
  }
  shown.finish();

  if (opts.json)
    print_json(std::cout, rows);
  else
    print_table(std::cout, spec, base.max_active_keys, rows);

  if (opts.serve)
    serve(opts, kept, signals);
  kept.stop();
  return status;
}
