// SPDX-License-Identifier: Apache-2.0
#pragma once

// Command-line options of keylane_bench.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace keylane::bench {

/// Everything the command line sets.
struct options {
  bool quick = false;
  bool json = false;
  bool plots = true;
  bool help = false;
  /// Also run the keylane ways in keylane_bench_sysalloc (system malloc).
  bool sysalloc = true;
  int runs = 3;
  /// Producer threads of the closed-loop (throughput) runs; keylane ways
  /// only when above 1.
  int producers = 1;
  size_t events = 200000;
  double rate = 200000;
  double latency_seconds = 1.0;
  std::vector<std::string> ways;
  std::vector<std::string> workloads;
  std::vector<std::string> schedulers{"sharing", "stealing"};
  std::vector<uint64_t> work_ns{0, 1000};
  /// Worker threads of every way that has them, one sweep point each
  /// (--threads); single_loop ignores it.
  std::vector<int> threads{2};
  /// keylane settings overrides of the keylane ways, "section.key=value"
  /// each, in command-line order (--set, repeatable).
  std::vector<std::string> sets;
  /// `--print-config`: print the keylane ways' settings as TOML and exit.
  bool print_config = false;
  std::string results = "results";
  /// Internal: run as the child of another keylane_bench and write the
  /// rows, one record a line, to this file instead of printing.
  std::string child_out;
};

/// Parses `argv`; on a mistake returns nothing and sets `error`.
[[nodiscard]] std::optional<options> parse_args(int argc, char** argv,
                                                std::string& error);

/// The --help text.
[[nodiscard]] std::string usage(const char* argv0);

} // namespace keylane::bench
