// SPDX-License-Identifier: Apache-2.0
#include "load_options.hpp"

#include <CLI/CLI.hpp>

namespace exchange {
namespace load {

namespace {

// A value check with the message the flag has always given. CLI11's own
// range checks word it differently, and scripts grep these.
template <class Number>
CLI::Validator must(const char* what, bool (*ok)(Number)) {
  return CLI::Validator{[what, ok](std::string& text) -> std::string {
                          Number x{};
                          if (!CLI::detail::lexical_cast(text, x) || !ok(x))
                            return text + ": " + what;
                          return {};
                        },
                        ""};
}

} // namespace

const char* usage() {
  return "order_entry_load: FIX 4.4 order flow against the exchange, open loop\n"
         "  --host H            server address (127.0.0.1)\n"
         "  --port P            server port (5001)\n"
         "  --sessions N        FIX sessions LOAD1..LOADN, 1..16 (8)\n"
         "  --rate R            orders/s over all sessions (5000)\n"
         "  --duration S        seconds of sending (10)\n"
         "  --seed N            flow seed, printed (1)\n"
         "  --symbols N         symbols S0000.. (1000)\n"
         "  --hot-share F       share of orders on the hot symbol (0.3)\n"
         "  --drain-timeout S   seconds to wait for outstanding answers (10)\n"
         "  --json              print one JSON object\n"
         "  --check-bad-inputs  send malformed and invalid requests over LOAD1,\n"
         "                      print PASS/FAIL per case\n"
         "  --check-limits      connections the server must drop: a BodyLength of\n"
         "                      999999999 then 64 MiB, 32 MiB of garbage, 200 that\n"
         "                      never log on; print PASS/FAIL per case\n"
         "  --limits-wait S     seconds each of those drops may take (10)\n"
         "  --slow-reader N     also log on as LOAD<sessions+1> over a raw socket,\n"
         "                      send N cancels of unknown orders and read nothing\n"
         "exit 0 only if every request was answered, no report was out of\n"
         "sequence and no session dropped.\n";
}

bool parse_options(int argc, char** argv, load_options& o, std::string& error) {
  CLI::App app{"order_entry_load"};
  // --help is a flag like the others: main prints usage() and exits 0.
  app.set_help_flag();
  app.option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  app.add_flag("-h,--help", o.help);
  app.add_flag("--json", o.json);
  app.add_flag("--check-bad-inputs", o.check_bad_inputs);
  app.add_flag("--check-limits", o.check_limits);
  app.add_option("--limits-wait", o.limits_wait_s)
    ->check(must<double>("must be > 0 s", [](double d) { return d > 0; }));
  app.add_option("--host", o.host);
  app.add_option("--port", o.port)
    ->check(must<long long>("must be a port 1..65535",
                            [](long long n) { return n >= 1 && n <= 65535; }));
  app.add_option("--sessions", o.sessions)
    ->check(must<long long>("must be 1..16 (LOAD1..LOAD16)",
                            [](long long n) { return n >= 1 && n <= 16; }));
  app.add_option("--rate", o.rate)
    ->check(must<double>("must be > 0 orders/s", [](double d) { return d > 0; }));
  app.add_option("--duration", o.duration_s)
    ->check(must<double>("must be > 0 s", [](double d) { return d > 0; }));
  app.add_option("--seed", o.seed)
    ->check(must<long long>("must be an integer >= 0",
                            [](long long n) { return n >= 0; }));
  app.add_option("--symbols", o.symbols)
    ->check(must<long long>("must be 1..10000",
                            [](long long n) { return n >= 1 && n <= 10000; }));
  app.add_option("--hot-share", o.hot_share)
    ->check(must<double>("must be in [0, 1)",
                         [](double d) { return d >= 0 && d < 1; }));
  app.add_option("--drain-timeout", o.drain_timeout_s)
    ->check(must<double>("must be >= 0 s", [](double d) { return d >= 0; }));
  app.add_option("--slow-reader", o.slow_reader)
    ->check(must<long long>("must be an integer >= 0",
                            [](long long n) { return n >= 0; }));
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    error = std::string{e.what()} + " (see --help)";
    return false;
  }
  if (o.slow_reader > 0 && o.sessions >= 16) {
    error = "--slow-reader logs on as LOAD<sessions+1>: use at most 15 sessions";
    return false;
  }
  return true;
}

} // namespace load
} // namespace exchange
