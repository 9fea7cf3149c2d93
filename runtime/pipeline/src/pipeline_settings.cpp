// SPDX-License-Identifier: Apache-2.0
#include <limits>

#include "keylane/detail/pipeline_checks.hpp"
#include "keylane/detail/stage_runner.hpp"

namespace keylane::detail {

settings stage_settings(const settings& pipeline, const stage_spec& spec) {
  auto out = pipeline;
  out.order = order_mode::none;
  // The pipeline's window bounds every stage, so a stage never holds back
  // a submit; a refusal would mean a bug and becomes a failed tombstone.
  out.window = std::numeric_limits<size_t>::max();
  out.window_auto = false;
  out.key_backlog = std::numeric_limits<size_t>::max();
  out.overflow = overflow_policy::reject;
  if (spec.concurrency > 0)
    out.max_active_keys = spec.concurrency;
  return out;
}

caf::error check_pipeline(const settings& cfg,
                          const std::vector<stage_spec>& stages) {
  auto refuse = [](std::string what) {
    return make_error(errc::invalid_config, std::move(what));
  };
  if (stages.empty())
    return refuse("a pipeline needs at least one stage");
  for (auto& s : stages)
    if (s.name.empty())
      return refuse("every pipeline stage needs a name");
  if (cfg.window == 0)
    return refuse("runtime.window = 0: a pipeline needs a window >= 1");
  // These bind one resource per runtime, and a pipeline runs one runtime
  // per stage: refuse them rather than let the stages fight over it.
  if (cfg.window_auto)
    return refuse("runtime.window = \"auto\" is not supported in pipelines "
                  "yet: set a number or \"unbounded\"");
  if (!cfg.spill_path.empty())
    return refuse("sink.spill_path is not supported in pipelines yet: "
                  "leave it empty");
  if (!cfg.metrics_listen.empty())
    return refuse("metrics.listen is not supported in pipelines yet: "
                  "leave it empty");
  if (cfg.park == park_mode::sqlite)
    return refuse("park.store = \"sqlite\" is not supported in pipelines "
                  "yet: stages park in memory");
  return caf::none;
}

} // namespace keylane::detail
