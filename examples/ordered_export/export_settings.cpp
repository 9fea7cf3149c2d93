// SPDX-License-Identifier: Apache-2.0
#include "export_settings.hpp"

#include <utility>

#include <keylane/config_loader.hpp>
#include <keylane/errc.hpp>

#include "layered_settings.hpp"
#include "export_handler.hpp"

namespace ordered_export {

keylane::settings default_settings() {
  keylane::settings s;
  s.max_active_keys = 8;
  s.scheduler = keylane::scheduler_policy::sharing;
  s.threads = 2;
  s.handler = handler_name;
  return s;
}

std::vector<std::string> read_settings(const settings_source& src,
                                       keylane::settings& out) {
  auto layered = keylane::cli::layered_settings(default_settings(),
                                                src.config, src.overrides);
  if (!layered)
    return {keylane::render(layered.error())};
  auto& cfg = *layered;
  if (cfg.handler != handler_name)
    return {cfg.origin + ": handler.name = \"" + cfg.handler
            + "\": this program only runs handler \"" + handler_name + "\""};
  // The handler reads no table of its own.
  if (!cfg.params.values().empty())
    return {cfg.origin + ": [handler." + handler_name
            + "] has no keys; remove them"};
  out = std::move(cfg);
  return {};
}

caf::expected<keylane::settings> mode_settings(const keylane::settings& base,
                                               const mode& m) {
  auto cfg = base;
  if (auto err = keylane::apply_overrides(cfg, m.keys))
    return err;
  return cfg;
}

} // namespace ordered_export
