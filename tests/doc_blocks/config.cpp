// SPDX-License-Identifier: Apache-2.0
#include <iostream>
#include <string>
#include <vector>

#include <keylane/config_loader.hpp>
#include <keylane/handler_registry.hpp>
#include <keylane/runtime.hpp>

// What docs/config.md's start assumes: a program's types, its handlers,
// its command line and its output callback.
namespace config_doc {

using payload = long;
using result = long;

int start(const std::string& config_path,
          const std::vector<std::string>& set_args,
          const keylane::handler_registry& registry,
          const keylane::runtime<payload, result>::callback& on_output) {
// doc:begin docs/config.md
auto cfg = keylane::load(config_path);
if (!cfg) {
  std::cerr << keylane::render(cfg.error()) << '\n';
  return 2;
}
if (auto err = keylane::apply_overrides(*cfg, set_args)) { // every --set value
  std::cerr << keylane::render(err) << '\n';
  return 2;
}
std::clog << keylane::to_toml(*cfg); // the effective config, for the log
auto rt = keylane::runtime<payload, result>::start(std::move(*cfg), registry,
                                                  on_output);
// doc:end
  return rt ? 0 : 1;
}

} // namespace config_doc
