// SPDX-License-Identifier: Apache-2.0
#include "options.hpp"

#include <cstdlib>
#include <iostream>
#include <unistd.h>

#include "arg_reader.hpp"

namespace exchange {

namespace {

constexpr const char* usage = R"(usage: exchange [--matcher keylane|single] [--port N] [--fix-config PATH]
                [--config PATH] [--set SECTION.KEY=VALUE]... [--symbols N]
                [--risk-us MIN-MAX | --no-risk] [--journal FILE] [--json]
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
  --session-queue N the most reports held for one FIX session whose client
                    does not read (default 50000); past it the session
                    loses its reports and its connection, and no other
                    session ever waits for it. 0: reports are written from
                    the matcher's output thread, one thread hop fewer, and
                    a client that stops reading stalls every session
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
  keylane::cli::arg_reader args{"exchange", argc, argv};
  while (args.next()) {
    if (args.flag("--help") || args.flag("-h")) {
      std::cout << usage;
      std::exit(0);
    } else if (args.flag("--json")) {
      opts.json = true;
    } else if (args.flag("--no-risk")) {
      opts.books.risk = false;
    } else if (auto v = args.value("--matcher")) {
      if (*v != "keylane" && *v != "single")
        args.fail("--matcher must be keylane or single, not '" + *v + "'");
      opts.matcher = *v;
    } else if (auto n = args.count("--port", 1)) {
      if (*n > 65535)
        args.fail("--port must be 1 to 65535");
      opts.port = static_cast<int>(*n);
    } else if (auto n = args.count("--symbols", 1)) {
      if (*n > 10000000)
        args.fail("--symbols must be 1 to 10000000");
      opts.books.symbols = static_cast<uint32_t>(*n);
    } else if (auto v = args.value("--risk-us")) {
      unsigned a = 0, b = 0;
      char tail = 0;
      if (std::sscanf(v->c_str(), "%u-%u%c", &a, &b, &tail) != 2 || a > b
          || b > 10000000)
        args.fail("--risk-us must be MIN-MAX in microseconds, e.g. 50-200");
      opts.books.risk_cfg.min_delay_us = a;
      opts.books.risk_cfg.max_delay_us = b;
    } else if (auto n = args.count("--session-queue", 0)) {
      opts.session_queue = static_cast<size_t>(*n);
    } else if (auto n = args.count("--risk-timeout-ms", 0)) {
      opts.books.risk_timeout = std::chrono::milliseconds{*n};
    } else if (auto v = args.value("--fix-config")) {
      opts.fix_config = *v;
    } else if (auto v = args.value("--config")) {
      opts.config = *v;
    } else if (auto v = args.value("--set")) {
      opts.overrides.push_back(*v);
    } else if (auto v = args.value("--journal")) {
      opts.journal = *v;
    } else if (auto v = args.value("--verify")) {
      opts.verify = *v;
    } else {
      args.fail("unknown argument '" + args.arg() + "'");
    }
  }
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
