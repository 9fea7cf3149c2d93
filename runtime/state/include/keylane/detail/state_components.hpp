// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <memory>
#include <string>

#include <caf/expected.hpp>

#include "keylane/state_store.hpp"

// The optional components as the core library sees them. The RocksDB state
// store (keylane::state), the SQLite park store (keylane::sqlite) and the
// metrics endpoint (keylane::metrics) are libraries of their own, so that a
// program that uses none of them links neither RocksDB, SQLite nor
// prometheus-cpp. The core reaches each through one entry point declared
// weak in the header of the subsystem that calls it (this one,
// park_components.hpp, metrics_component.hpp): it is null unless the
// program links the component, whose target makes the linker take the
// definition from its archive (`--undefined=keylane_component_<name>`, the
// anchor beside it). A config that asks for a component the program does not
// link gets an error that names the target to link. The definitions
// (component_*.cpp) must not include these headers: a weak definition would
// not make the linker take them from the archive.
namespace keylane::detail {

/// `open_rocksdb_state_store(path, false, recover, report)`; null unless
/// keylane::state is linked.
[[gnu::weak]] caf::expected<std::unique_ptr<state_store>>
component_open_rocksdb_state_store(const std::string& path,
                                   state_recovery recover,
                                   const log_writer& report);

/// The keyed state in changelog topic `topic` at `bootstrap` (every
/// partition read to its end, each key's last record), read-only; null
/// unless keylane::kafka is linked.
[[gnu::weak]] caf::expected<std::unique_ptr<state_store>>
component_open_changelog(const std::string& bootstrap,
                         const std::string& topic);

} // namespace keylane::detail
