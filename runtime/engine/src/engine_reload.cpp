// SPDX-License-Identifier: Apache-2.0
// Reload: the run-time keys of a new config reach the producers (window),
// the sink (stall threshold, latency toggle), the supervisor (cap) and the
// lanes (retry policy, read at each attempt) without stopping anything.

#include <algorithm>
#include <string>

#include <caf/all.hpp>

#include "keylane/detail/engine.hpp"
#include "keylane/detail/key_table.hpp"
#include "keylane/detail/messages.hpp"

namespace keylane::detail {

namespace {

std::string describe(const setting_change& c) {
  return c.key + " = " + (c.before.empty() ? "(unset)" : c.before) + " -> "
         + (c.after.empty() ? "(unset)" : c.after);
}

} // namespace

caf::error engine::check_numbers(const settings& cfg) {
  // The config file checks ranges; settings filled in code are checked here.
  if (cfg.max_active_keys == 0 || cfg.window == 0 || cfg.window_max == 0
      || cfg.key_backlog == 0
      || cfg.lane_batch == 0 || cfg.ingress_batch == 0 || cfg.max_attempts == 0
      || cfg.max_throughput == 0 || !(cfg.backoff_multiplier >= 1.0))
    return make_error(errc::invalid_config,
                      "runtime.max_active_keys, window, window_max, "
                      "key_backlog, "
                      "lane_batch, ingress_batch, retry.max_attempts and "
                      "scheduler.max_throughput must be >= 1, and "
                      "retry.multiplier >= 1.0");
  return caf::none;
}

size_t engine::initial_window(const settings& cfg) noexcept {
  if (!cfg.spill_path.empty())
    return unbounded; // the spill file's size bounds admission instead
  if (!cfg.window_auto)
    return cfg.window;
  // Small until measured: the sink grows it as soon as a straggler shows.
  auto twice_cap = cfg.max_active_keys > unbounded / 2 ? unbounded
                                                       : 2 * cfg.max_active_keys;
  return std::min(cfg.window_max, twice_cap);
}

caf::expected<reload_report> engine::reload(settings next) {
  if (auto err = check_numbers(next)) {
    log_.write(log_level::error, "reload from " + next.origin
                                   + " refused, running config kept: "
                                   + render(err));
    return err;
  }
  if (spill_ && next.window_auto) {
    auto err = make_error(errc::invalid_config,
                          "runtime.window = \"auto\" and sink.spill_path are "
                          "alternatives; this runtime spills");
    log_.write(log_level::error, "reload from " + next.origin
                                   + " refused, running config kept: "
                                   + render(err));
    return err;
  }
  std::lock_guard<std::mutex> serial{reload_mtx_};
  if (stopped_.load(std::memory_order_acquire)) {
    log_.write(log_level::error, "reload from " + next.origin
                                   + " refused: the runtime is stopping");
    return make_error(errc::stopped, "reload after stop()");
  }
  auto cur = live();
  reload_report rep;
  for (auto& c : differences(*cur, next))
    (reloads_at_run_time(c.key) ? rep.applied : rep.needs_restart)
      .push_back(std::move(c));
  for (auto& c : rep.needs_restart)
    log_.write(log_level::warning, "reload from " + next.origin + ": "
                                     + describe(c)
                                     + " takes effect only at restart");
  if (rep.applied.empty()) {
    log_.write(log_level::info,
               "reload from " + next.origin + ": no run-time key changed");
    return rep;
  }
  auto upd = std::make_shared<settings>(*cur);
  upd->max_active_keys = next.max_active_keys;
  upd->window = next.window;
  upd->window_auto = next.window_auto;
  upd->window_max = next.window_max;
  upd->max_attempts = next.max_attempts;
  upd->initial_backoff_ms = next.initial_backoff_ms;
  upd->backoff_multiplier = next.backoff_multiplier;
  upd->max_backoff_ms = next.max_backoff_ms;
  upd->jitter = next.jitter;
  upd->attempt_timeout_ms = next.attempt_timeout_ms;
  upd->log = next.log;
  upd->stall_ms = next.stall_ms;
  upd->metrics_latency = next.metrics_latency;
  upd->origin = next.origin;
  settings_ptr fixed = upd;
  live_.set(fixed);
  // In force when reload returns: a key admitted after this never sees the
  // old cap (the supervisor only retires lanes above it and admits keys).
  keys_->set_cap(fixed->max_active_keys);
  log_.threshold(fixed->log);
  // An automatic window is sized by the sink from here on; with a spill
  // file the window bounds the sink's memory, not admission. A larger
  // window lets blocked producers in.
  if (!spill_ && !fixed->window_auto)
    ingress_.resize_window(fixed->window);
  else if (!spill_ && !cur->window_auto)
    ingress_.resize_window(initial_window(*fixed));
  caf::anon_send(supervisor_, reload_atom::value, fixed);
  caf::anon_send(sink_, reload_atom::value, fixed);
  for (auto& c : rep.applied)
    log_.write(log_level::info,
               "reload from " + next.origin + ": " + describe(c));
  return rep;
}

} // namespace keylane::detail
