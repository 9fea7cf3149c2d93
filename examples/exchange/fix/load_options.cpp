// SPDX-License-Identifier: Apache-2.0
#include "load_options.hpp"

#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace exchange {
namespace load {

namespace {

bool to_double(const char* s, double& out) {
  char* end = nullptr;
  errno = 0;
  out = std::strtod(s, &end);
  return errno == 0 && end != s && *end == '\0';
}

bool to_int(const char* s, long long& out) {
  char* end = nullptr;
  errno = 0;
  out = std::strtoll(s, &end, 10);
  return errno == 0 && end != s && *end == '\0';
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
         "  --slow-reader N     also log on as LOAD<sessions+1> over a raw socket,\n"
         "                      send N cancels of unknown orders and read nothing\n"
         "exit 0 only if every request was answered, no report was out of\n"
         "sequence and no session dropped.\n";
}

bool parse_options(int argc, char** argv, load_options& o, std::string& error) {
  for (int i = 1; i < argc; ++i) {
    const char* f = argv[i];
    if (!std::strcmp(f, "--json")) { o.json = true; continue; }
    if (!std::strcmp(f, "--check-bad-inputs")) { o.check_bad_inputs = true; continue; }
    if (!std::strcmp(f, "--help") || !std::strcmp(f, "-h")) { o.help = true; continue; }
    if (i + 1 >= argc) {
      error = std::string(f) + ": needs a value or is unknown (see --help)";
      return false;
    }
    const char* v = argv[++i];
    double d = 0;
    long long n = 0;
    auto bad = [&](const char* what) {
      error = std::string(f) + " " + v + ": " + what;
      return false;
    };
    if (!std::strcmp(f, "--host")) {
      o.host = v;
    } else if (!std::strcmp(f, "--port")) {
      if (!to_int(v, n) || n < 1 || n > 65535) return bad("must be a port 1..65535");
      o.port = static_cast<int>(n);
    } else if (!std::strcmp(f, "--sessions")) {
      if (!to_int(v, n) || n < 1 || n > 16) return bad("must be 1..16 (LOAD1..LOAD16)");
      o.sessions = static_cast<int>(n);
    } else if (!std::strcmp(f, "--rate")) {
      if (!to_double(v, d) || d <= 0) return bad("must be > 0 orders/s");
      o.rate = d;
    } else if (!std::strcmp(f, "--duration")) {
      if (!to_double(v, d) || d <= 0) return bad("must be > 0 s");
      o.duration_s = d;
    } else if (!std::strcmp(f, "--seed")) {
      if (!to_int(v, n) || n < 0) return bad("must be an integer >= 0");
      o.seed = static_cast<uint64_t>(n);
    } else if (!std::strcmp(f, "--symbols")) {
      if (!to_int(v, n) || n < 1 || n > 10000) return bad("must be 1..10000");
      o.symbols = static_cast<int>(n);
    } else if (!std::strcmp(f, "--hot-share")) {
      if (!to_double(v, d) || d < 0 || d >= 1) return bad("must be in [0, 1)");
      o.hot_share = d;
    } else if (!std::strcmp(f, "--drain-timeout")) {
      if (!to_double(v, d) || d < 0) return bad("must be >= 0 s");
      o.drain_timeout_s = d;
    } else if (!std::strcmp(f, "--slow-reader")) {
      if (!to_int(v, n) || n < 0) return bad("must be an integer >= 0");
      o.slow_reader = static_cast<uint64_t>(n);
    } else {
      error = std::string(f) + ": unknown flag (see --help)";
      return false;
    }
  }
  if (o.slow_reader > 0 && o.sessions >= 16) {
    error = "--slow-reader logs on as LOAD<sessions+1>: use at most 15 sessions";
    return false;
  }
  return true;
}

} // namespace load
} // namespace exchange
