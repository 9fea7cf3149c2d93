// SPDX-License-Identifier: Apache-2.0
// keylane::state's entry point for the core (see detail/state_components.hpp,
// which this file must not include: the definition here must be strong).
#include <memory>
#include <string>

#include <caf/expected.hpp>

#include "keylane/state_store.hpp"

namespace keylane::detail {

caf::expected<std::unique_ptr<state_store>>
component_open_rocksdb_state_store(const std::string& path,
                                   state_recovery recover,
                                   const log_writer& report);

caf::expected<std::unique_ptr<state_store>>
component_open_rocksdb_state_store(const std::string& path,
                                   state_recovery recover,
                                   const log_writer& report) {
  return open_rocksdb_state_store(path, false, recover, report);
}

} // namespace keylane::detail

// The anchor keylane::state's link options name, so the linker takes this
// file (and the entry point above) from the archive.
extern "C" void keylane_component_state() {}
