// SPDX-License-Identifier: Apache-2.0
#include "lane_settings.hpp"

#include <utility>

#include <keylane/errc.hpp>

#include "layered_settings.hpp"
#include "ledger_handler.hpp"

namespace ledger {

keylane::settings default_settings() {
  keylane::settings s;
  s.max_active_keys = 8;
  s.window = keylane::unbounded;
  s.order = keylane::order_mode::per_key;
  s.scheduler = keylane::scheduler_policy::sharing;
  s.threads = 2;
  s.handler = handler_name;
  // Balances outlive a lane's retire; --set state.store=rocksdb
  // --set state.path=DIR keeps them across runs too.
  s.state_store = keylane::state_backend::memory;
  return s;
}

keylane::settings retry_settings() {
  auto s = default_settings();
  s.max_attempts = 4;
  s.initial_backoff_ms = 5;
  s.backoff_multiplier = 2.0;
  s.max_backoff_ms = 50;
  s.jitter = keylane::jitter_mode::full;
  s.park = keylane::park_mode::memory;
  return s;
}

std::vector<std::string> settings_problems(const keylane::settings& cfg) {
  std::vector<std::string> out;
  if (cfg.handler != handler_name)
    out.push_back(cfg.origin + ": handler.name = \"" + cfg.handler
                  + "\": this program only runs handler \"" + handler_name
                  + "\"");
  // Read the table the way the handler will, on a copy, so its problems
  // show up now rather than when the first lane starts.
  keylane::handler_params params = cfg.params;
  (void) handler_options::from(params);
  for (auto& p : params.problems(handler_name))
    out.push_back(std::move(p));
  return out;
}

std::vector<std::string> read_settings(const settings_source& src,
                                       keylane::settings& out) {
  auto cfg = keylane::cli::layered_settings(
    src.retry ? retry_settings() : default_settings(), src.config,
    src.overrides);
  if (!cfg)
    return {keylane::render(cfg.error())};
  auto problems = settings_problems(*cfg);
  if (problems.empty())
    out = std::move(*cfg);
  return problems;
}

} // namespace ledger
