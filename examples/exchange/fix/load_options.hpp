// SPDX-License-Identifier: Apache-2.0
#pragma once

// The load client's flags, parsed into one plain struct with defaults.

#include <cstdint>
#include <string>

namespace exchange {
namespace load {

/// What order_entry_load runs; the defaults are its documented flags.
struct load_options {
  std::string host = "127.0.0.1";
  int port = 5001;
  int sessions = 8;          ///< LOAD1..LOADn, at most 16
  double rate = 5000;        ///< orders/s over all sessions, open loop
  double duration_s = 10;
  uint64_t seed = 1;
  int symbols = 1000;        ///< S0000..S(n-1)
  double hot_share = 0.3;    ///< the hot symbol's share of orders
  double drain_timeout_s = 10;
  bool json = false;
  bool check_bad_inputs = false;
  bool check_limits = false;
  double limits_wait_s = 10; ///< --check-limits: how long a drop may take
  uint64_t slow_reader = 0;  ///< requests of a client that never reads (0: none)
  bool help = false;
};

/// Fills `out` from argv; false with `error` saying which flag and why.
bool parse_options(int argc, char** argv, load_options& out, std::string& error);

/// The --help text.
const char* usage();

} // namespace load
} // namespace exchange
