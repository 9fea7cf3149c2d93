// SPDX-License-Identifier: Apache-2.0
#include "options.hpp"

#include <cstdlib>
#include <iostream>
#include <unistd.h>

#include "command_line.hpp"

namespace exchange {

namespace {

constexpr const char* usage = R"(usage: exchange [--matcher keylane|single] [--port N] [--fix-config PATH]
                [--config PATH] [--set SECTION.KEY=VALUE]... [--symbols N]
                [--risk-us MIN-MAX | --no-risk] [--journal FILE] [--json]
                [--logon-timeout-ms N] [--max-logon-bytes N]
                [--max-message-bytes N] [--max-unsent-bytes N] [--print-config]
       exchange --verify FILE

A FIX 4.4 order-entry server: NewOrderSingle (limit, DAY),
OrderCancelRequest and OrderCancelReplaceRequest on symbols S0000..,
one order book per symbol (price-time priority, fills at the resting
order's price), a pre-trade risk check per new order and replace. It runs
until SIGINT or SIGTERM, then answers what it accepted, stops and prints
its counters.

  --matcher M       keylane: one keylane lane per symbol (default);
                    single: one thread takes each order to the end, risk
                    check included, before the next (the baseline)
  --port N          FIX port (default: SocketAcceptPort of --fix-config)
  --fix-config P    QuickFIX session settings (default: exchange.fix.cfg
                    beside the program)
  --config PATH     keylane settings (TOML; default: exchange.toml beside
                    the program if it is there, else the same built in)
  --set S.K=V       override one keylane setting, validated like the file;
                    repeatable
  --print-config    print the effective keylane settings (built in,
                    --config, --set) as TOML and exit 0
  --session-queue N the most reports held for one FIX session whose client
                    does not read (default 50000); past it the session
                    loses its reports and its connection, and no other
                    session ever waits for it. 0: reports are written from
                    the matcher's output thread, one thread hop fewer, and
                    a client that stops reading stalls every session
  --logon-timeout-ms N  drop a FIX connection that has not completed a
                    Logon within N ms (default 5000, 100..600000)
  --max-logon-bytes N  the most bytes a connection may send before its
                    Logon is complete, garbage included (default 4096,
                    256..1048576); past it the connection is dropped
  --max-message-bytes N  the largest message of a logged-on session,
                    header and trailer included, and so the most a
                    connection buffers (default 65536, from
                    --max-logon-bytes to 67108864); a BodyLength past it
                    drops the connection before its body is read
  --max-unsent-bytes N  the most bytes written for a FIX connection that
                    its socket has not taken (default 16777216, 65536..
                    1073741824); past it the connection is dropped
  --symbols N       listed symbols S0000..S<N-1> (default 1000)
  --risk-us A-B     the risk actor answers after A..B microseconds, drawn
                    uniformly (default 50-200)
  --no-risk         no risk check
  --risk-timeout-ms N  refuse an order whose check is not answered within N
                    ms (default 1000; 0: no timeout, which spares CAF's
                    clock thread a timer per check)
  --journal FILE    write every request a book took (with its place in
                    the symbol's sequence) and every report, JSON lines
  --json            print the counters at exit as one JSON object
  --verify FILE     replay a journal through the reference matcher, symbol
                    by symbol; exit 0 when every report matches, 1 when not
  --help            print this text

Exit status: 0 after a clean stop, 1 when a check failed, 2 for bad
arguments or settings, 3 when the FIX acceptor could not start.
)";

std::string beside_program(const char* file) {
  char buf[4096];
  auto n = ::readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n <= 0)
    return file;
  std::string path{buf, static_cast<size_t>(n)};
  return path.substr(0, path.rfind('/') + 1) + file;
}

} // namespace

options parse_args(int argc, char** argv) {
  options opts;
  keylane::cli::command_line cl{"exchange", usage};
  bool no_risk = false;
  std::optional<std::string> risk_us;
  uint64_t risk_timeout_ms = 0;
  cl.flag("--json", opts.json);
  cl.flag("--no-risk", no_risk);
  cl.text("--matcher", opts.matcher);
  cl.count("--port", opts.port, 1, 65535);
  cl.count("--symbols", opts.books.symbols, 1, 10000000);
  cl.text("--risk-us", risk_us);
  cl.count("--session-queue", opts.session_queue, 0);
  cl.count("--logon-timeout-ms", opts.fix_limits.logon_timeout_ms, 100, 600000);
  cl.count("--max-logon-bytes", opts.fix_limits.logon_bytes, 256, 1u << 20);
  cl.count("--max-message-bytes", opts.fix_limits.message_bytes, 256, 64u << 20);
  cl.count("--max-unsent-bytes", opts.fix_limits.unsent_bytes, 64u << 10, 1u << 30);
  auto timeout = cl.count("--risk-timeout-ms", risk_timeout_ms, 0);
  cl.text("--fix-config", opts.fix_config);
  cl.text("--config", opts.config);
  keylane::cli::add_repeated(cl.app(), "--set", opts.overrides);
  cl.flag("--print-config", opts.print_config);
  cl.text("--journal", opts.journal);
  cl.text("--verify", opts.verify);
  cl.parse(argc, argv);
  if (opts.matcher != "keylane" && opts.matcher != "single")
    cl.fail("--matcher must be keylane or single, not '" + opts.matcher + "'");
  if (opts.fix_limits.message_bytes < opts.fix_limits.logon_bytes)
    cl.fail("--max-message-bytes " + std::to_string(opts.fix_limits.message_bytes)
            + " is below --max-logon-bytes "
            + std::to_string(opts.fix_limits.logon_bytes)
            + ": a logged-on session may send at least what a Logon may");
  if (no_risk)
    opts.books.risk = false;
  if (risk_us) {
    unsigned a = 0, b = 0;
    char tail = 0;
    if (std::sscanf(risk_us->c_str(), "%u-%u%c", &a, &b, &tail) != 2 || a > b
        || b > 10000000)
      cl.fail("--risk-us must be MIN-MAX in microseconds, e.g. 50-200");
    opts.books.risk_cfg.min_delay_us = a;
    opts.books.risk_cfg.max_delay_us = b;
  }
  if (timeout->count() > 0)
    opts.books.risk_timeout = std::chrono::milliseconds{risk_timeout_ms};
  if (opts.fix_config.empty())
    opts.fix_config = beside_program("exchange.fix.cfg");
  if (!opts.config) {
    auto beside = beside_program("exchange.toml");
    if (::access(beside.c_str(), R_OK) == 0)
      opts.config = beside;
  }
  return opts;
}

} // namespace exchange
