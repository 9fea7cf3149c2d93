// SPDX-License-Identifier: Apache-2.0
#include "modes.hpp"

namespace ordered_export {

std::vector<mode> all_modes(const mode_params& p) {
  auto window = std::to_string(p.window);
  auto no_spill = std::string{"sink.spill_path=\"\""};
  // Every mode names its order, window and spill directory, so that a base
  // setting (from --config or --set) of those keys cannot make a mode
  // something else, or an invalid combination.
  std::vector<mode> out;
  out.push_back({"unordered", "unordered (order none)",
                 {"runtime.order=none", "runtime.window=unbounded", no_spill},
                 keying::per_row, model_spec{false, 0}, false});
  out.push_back({"global_unbounded", "global, unbounded buffer",
                 {"runtime.order=global", "runtime.window=unbounded",
                  no_spill},
                 keying::per_row, model_spec{true, 0}, false});
  out.push_back({"global_window_" + window, "global, window " + window,
                 {"runtime.order=global", "runtime.window=" + window,
                  no_spill},
                 keying::per_row, model_spec{true, p.window}, false});
  out.push_back({"per_key", "per key (100 customers)",
                 {"runtime.order=per_key", "runtime.window=unbounded",
                  no_spill},
                 keying::per_customer, std::nullopt, false});
  out.push_back({"global_auto",
                 "global, window auto (max " + std::to_string(p.window_max)
                   + ")",
                 {"runtime.order=global", "runtime.window=auto",
                  "runtime.window_max=" + std::to_string(p.window_max),
                  no_spill},
                 keying::per_row, std::nullopt, false});
  out.push_back({"global_window_" + window + "_spill",
                 "global, window " + window + " + spill",
                 {"runtime.order=global", "runtime.window=" + window,
                  "sink.spill_path=\"" + p.spill_dir + "\""},
                 keying::per_row, std::nullopt, false});
  out.push_back({"global_window_" + window + "_timeout",
                 "global, window " + window + " + timeout "
                   + std::to_string(p.attempt_timeout_ms) + " ms",
                 {"runtime.order=global", "runtime.window=" + window, no_spill,
                  "retry.max_attempts=1",
                  "retry.attempt_timeout_ms="
                    + std::to_string(p.attempt_timeout_ms),
                  "park.store=none"},
                 keying::per_row, std::nullopt, true});
  return out;
}

} // namespace ordered_export
