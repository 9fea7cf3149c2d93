// SPDX-License-Identifier: Apache-2.0
// order_entry_load: a FIX 4.4 load client for the exchange example. N
// initiator sessions send a seeded open-loop flow of new / cancel / replace
// orders and check every ExecutionReport against the order's own sequence;
// --check-bad-inputs sends invalid requests instead and checks the answers;
// --check-limits sends what the server must drop a connection for.

#include <cstdio>

#include "bad_inputs.hpp"
#include "limit_checks.hpp"
#include "load_options.hpp"
#include "load_report.hpp"
#include "load_run.hpp"

int main(int argc, char** argv) {
  using namespace exchange::load;
  load_options o;
  std::string error;
  if (!parse_options(argc, argv, o, error)) {
    std::fprintf(stderr, "order_entry_load: %s\n", error.c_str());
    return 2;
  }
  if (o.help) {
    std::fputs(usage(), stdout);
    return 0;
  }
  if (o.check_bad_inputs)
    return check_bad_inputs(o) ? 0 : 1;
  if (o.check_limits)
    return check_limits(o) ? 0 : 1;
  std::fprintf(stderr, "order_entry_load: seed %llu\n",
               static_cast<unsigned long long>(o.seed));
  run_result r = run_load(o);
  if (r.error.empty() || r.totals.sent > 0)
    print_report(o, r);
  auto why = verdict(r);
  for (const auto& w : why)
    std::fprintf(stderr, "order_entry_load: FAIL: %s\n", w.c_str());
  return why.empty() ? 0 : 1;
}
