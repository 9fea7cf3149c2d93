// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <memory>
#include <string>

#include <caf/expected.hpp>

#include "keylane/park_store.hpp"

// keylane::sqlite's entry point, declared weak for the park service (see
// detail/state_components.hpp for why).
namespace keylane::detail {

/// `open_sqlite_park_store(path)`; null unless keylane::sqlite is linked.
[[gnu::weak]] caf::expected<std::unique_ptr<park_store>>
component_open_sqlite_park_store(const std::string& path);

} // namespace keylane::detail
