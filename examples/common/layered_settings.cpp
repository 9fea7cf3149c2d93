// SPDX-License-Identifier: Apache-2.0
#include "layered_settings.hpp"

#include <cstdlib>
#include <iostream>
#include <utility>

#include <keylane/config_loader.hpp>

namespace keylane::cli {

caf::expected<keylane::settings>
layered_settings(keylane::settings defaults,
                 const std::optional<std::string>& config,
                 const std::vector<std::string>& overrides) {
  auto cfg = std::move(defaults);
  if (config) {
    auto loaded = keylane::load(*config);
    if (!loaded)
      return std::move(loaded.error());
    cfg = std::move(*loaded);
  }
  if (!overrides.empty())
    if (auto err = keylane::apply_overrides(cfg, overrides))
      return err;
  return cfg;
}

void print_config_if(bool requested, const keylane::settings& s) {
  if (!requested)
    return;
  std::cout << keylane::to_toml(s) << std::flush;
  std::exit(0);
}

} // namespace keylane::cli
