// SPDX-License-Identifier: Apache-2.0
// Shows a pipeline of two stages: results re-sequenced once at the sink
// versus after each stage, and why a stateful stage needs a re-sequencer in
// front of it.

#include <iostream>
#include <vector>

#include <keylane/errc.hpp>

#include "layered_settings.hpp"
#include "modes.hpp"
#include "options.hpp"
#include "report.hpp"
#include "workload.hpp"

namespace pe = pipeline_example;

namespace {

keylane::settings default_settings() {
  keylane::settings s;
  s.max_active_keys = 8;
  s.scheduler = keylane::scheduler_policy::sharing;
  s.threads = 2;
  return s;
}

} // namespace

int main(int argc, char** argv) {
  auto opts = pe::parse_args(argc, argv);
  auto cfg = keylane::cli::layered_settings(default_settings(), opts.config,
                                            opts.overrides);
  if (!cfg) {
    std::cerr << "pipeline: " << keylane::render(cfg.error()) << '\n';
    return 2;
  }
  if (opts.print_config) {
    auto shown = *cfg;
    shown.order = keylane::order_mode::global; // as every mode sets it
    keylane::cli::print_config_if(true, shown);
  }
  pe::timing t;
  if (opts.quick) {
    t.fetch = std::chrono::milliseconds(2);
    t.straggler = std::chrono::milliseconds(40);
    t.convert = std::chrono::milliseconds(2);
  }
  auto n = opts.items ? opts.items : (opts.quick ? 300 : 1000);
  auto items = pe::make_items(n, 100, opts.seed, t);
  std::vector<pe::mode_result> rows;
  bool good = true;
  for (auto& m : pe::all_modes()) {
    rows.push_back(pe::run_mode(m, *cfg, items));
    auto& r = rows.back();
    bool must_match = std::string{m.name} != "stateful_unsequenced";
    if (!r.error.empty() || r.violations != 0 || r.delivered != n
        || (must_match && r.mismatches != 0))
      good = false;
  }
  if (opts.json)
    pe::print_json(std::cout, rows);
  else
    pe::print_table(std::cout, rows, n);
  return good ? 0 : 1;
}
