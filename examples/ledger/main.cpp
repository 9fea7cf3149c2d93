// The ledger: why per-key lanes. One workload of account events (half of
// them on one hot account, each a 1-4 ms database round trip) runs three
// ways — a shared queue, hash partitions, keylane lanes — and the program
// shows which ways keep each account's order and how long the hot account
// makes the others wait. The retry scenario shows what lanes do with
// failures: retry at the head of a lane, park in order, replay.

#include <charconv>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include <keylane/config_loader.hpp>
#include <keylane/errc.hpp>

#include "lane_settings.hpp"
#include "report.hpp"
#include "retry_report.hpp"
#include "retry_scenario.hpp"
#include "retry_verdict.hpp"
#include "ways.hpp"
#include "workload.hpp"

namespace {

constexpr const char* usage = R"(usage: ledger [--scenario hot|retry] [--json] [--seed N] [--config PATH]
              [--set SECTION.KEY=VALUE]...

--scenario hot (the default): runs 400 account events over 40 accounts
(acct-0 hot with 200 of them), each costing a simulated 1-4 ms database
round trip, three ways: a shared queue with 8 workers, 8 hash partitions,
and keylane lanes. Prints, per way, the per-account order violations, the
rejected business events, when the cold accounts finished (median and
last), when the hot one finished, and the total time.

--scenario retry: runs 200 account events (40 accounts, 5 each, 1-4 ms
round trip) through keylane lanes that retry up to 4 attempts per event,
while the handler fails acct-5's second event twice (retryable) and
acct-9's first event for good. Checks that acct-5 completes in order after
2 retries, that acct-9's events are all parked in order (parked_events
lists them as submitted), that every other account is unaffected; then
clears acct-9's fault, replays it, drains and checks that its events
complete in order. --json prints one line that starts
{"order_kept": true, "parked": {"acct-9": 5}, "retried": {"acct-5": 2},
"replayed_in_order": true, ...

  --scenario NAME  hot or retry (default hot)
  --json           print only one JSON object, on one line
  --seed N         seed of the workload (default 42)
  --config PATH    keylane settings for the lanes (TOML, see ledger.toml and
                   retry.toml); default: max_active_keys = 8, window =
                   "unbounded", order = "per_key", scheduler "sharing" on 2
                   threads, and for retry the [retry] and [park] of
                   retry.toml
  --set S.K=V      override one setting after --config, validated like the
                   file (runtime.max_active_keys=4, retry.max_attempts=2);
                   repeatable, a later one wins
  --help           print this text

Exit status: 0 when the scenario went as expected (hot: the partitions and
the lanes kept every account's order and rejected nothing; retry: every
check above held), 1 when it did not (or the lanes failed), 2 for bad
arguments, a bad config file or a bad --set.
)";

enum class scenario { hot, retry };

struct options {
  scenario which = scenario::hot;
  bool json = false;
  uint64_t seed = 42;
  std::optional<std::string> config;
  std::vector<std::string> overrides;
};

[[noreturn]] void bad_usage(const std::string& what) {
  std::cerr << "ledger: " << what << "\ntry 'ledger --help'\n";
  std::exit(2);
}

uint64_t parse_seed(const std::string& text) {
  uint64_t x = 0;
  auto first = text.data();
  auto last = first + text.size();
  auto [end, ec] = std::from_chars(first, last, x);
  if (text.empty() || ec != std::errc{} || end != last)
    bad_usage("--seed needs a non-negative integer below 2^64, got '" + text
              + "'");
  return x;
}

options parse_args(int argc, char** argv) {
  options opts;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    // Accepts "--name value" and "--name=value".
    auto value = [&](const char* name) -> std::optional<std::string> {
      auto n = std::strlen(name);
      if (arg == name) {
        if (i + 1 >= argc)
          bad_usage(std::string{name} + " needs a value");
        return std::string{argv[++i]};
      }
      if (arg.size() > n && arg.compare(0, n, name) == 0 && arg[n] == '=')
        return arg.substr(n + 1);
      return std::nullopt;
    };
    if (arg == "--help" || arg == "-h") {
      std::cout << usage;
      std::exit(0);
    } else if (arg == "--json") {
      opts.json = true;
    } else if (auto v = value("--scenario")) {
      if (*v == "hot")
        opts.which = scenario::hot;
      else if (*v == "retry")
        opts.which = scenario::retry;
      else
        bad_usage("--scenario must be hot or retry, got '" + *v + "'");
    } else if (auto v = value("--set")) {
      opts.overrides.push_back(*v);
    } else if (auto v = value("--seed")) {
      opts.seed = parse_seed(*v);
    } else if (auto v = value("--config")) {
      if (v->empty())
        bad_usage("--config needs a file path");
      opts.config = *v;
    } else {
      bad_usage("unknown argument '" + arg + "'");
    }
  }
  return opts;
}

keylane::settings load_settings(const options& opts) {
  auto cfg = opts.which == scenario::retry ? ledger::retry_settings()
                                           : ledger::default_settings();
  if (opts.config) {
    auto loaded = keylane::load(*opts.config);
    if (!loaded) {
      std::cerr << "ledger: " << keylane::render(loaded.error()) << '\n';
      std::exit(2);
    }
    cfg = std::move(*loaded);
  }
  if (!opts.overrides.empty()) {
    if (auto err = keylane::apply_overrides(cfg, opts.overrides)) {
      std::cerr << "ledger: " << keylane::render(err) << '\n';
      std::exit(2);
    }
  }
  auto problems = ledger::settings_problems(cfg);
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
int run_hot(const options& opts, const keylane::settings& cfg) {
  ledger::workload_spec spec;
  spec.seed = opts.seed;
  auto w = ledger::make_workload(spec);

  std::vector<ledger::way_result> ways;
  ways.push_back(ledger::run_shared_queue(w));
  ways.push_back(ledger::run_hash_partitions(w));
  auto lanes = ledger::run_key_lanes(w, cfg);
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
int run_retry(const options& opts, const keylane::settings& cfg) {
  ledger::retry_spec spec;
  spec.seed = opts.seed;
  auto obs = ledger::run_retry_scenario(spec, cfg);
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

} // namespace

int main(int argc, char** argv) {
  auto opts = parse_args(argc, argv);
  auto cfg = load_settings(opts);
  return opts.which == scenario::retry ? run_retry(opts, cfg)
                                       : run_hot(opts, cfg);
}
