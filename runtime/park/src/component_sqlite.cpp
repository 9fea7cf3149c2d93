// SPDX-License-Identifier: Apache-2.0
// keylane::sqlite's entry point for the core (see detail/park_components.hpp,
// which this file must not include: the definition here must be strong).
#include <memory>
#include <string>

#include <caf/expected.hpp>

#include "keylane/park_store.hpp"

namespace keylane::detail {

caf::expected<std::unique_ptr<park_store>>
component_open_sqlite_park_store(const std::string& path);

caf::expected<std::unique_ptr<park_store>>
component_open_sqlite_park_store(const std::string& path) {
  return open_sqlite_park_store(path);
}

} // namespace keylane::detail

// The anchor keylane::sqlite's link options name, so the linker takes this
// file (and the entry point above) from the archive.
extern "C" void keylane_component_sqlite() {}
