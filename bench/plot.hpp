// SPDX-License-Identifier: Apache-2.0
#pragma once

// Plots of a full run, drawn by gnuplot (Debian's gnuplot-nox).

#include <string>
#include <vector>

#include "report.hpp"

namespace keylane::bench {

/// Writes the plot data of `rows` into `dir` and draws
/// `dir`/perf_throughput.svg and `dir`/perf_latency.svg with plot.gp; a
/// series per way and scheduler, and per thread count when `by_threads`
/// (a sweep of `--threads`). Returns a note for the user: what was
/// written, or why nothing was.
[[nodiscard]] std::string draw_plots(const std::vector<row>& rows,
                                     const std::string& dir, bool by_threads);

} // namespace keylane::bench
