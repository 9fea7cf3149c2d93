// SPDX-License-Identifier: Apache-2.0
#pragma once

// One open-loop run of order_entry_load: log on, send on a fixed schedule,
// drain, log out.

#include <string>

#include "load_options.hpp"
#include "order_tracker.hpp"

namespace exchange {
namespace load {

/// What a run measured.
struct run_result {
  tracker_totals totals;
  double send_s = 0;          ///< from the first scheduled send to the last
  double drain_s = 0;         ///< waiting for answers after the last send
  uint64_t session_errors = 0; ///< logouts and disconnects while running
  uint64_t malformed_reports = 0; ///< server messages our QuickFIX rejected
  uint64_t slow_reader_sent = 0; ///< requests the reading-nothing client wrote
  std::string hot_symbol;
  std::string error;          ///< set if the run could not start
};

/// Runs the flow `o` describes against the server.
run_result run_load(const load_options& o);

} // namespace load
} // namespace exchange
