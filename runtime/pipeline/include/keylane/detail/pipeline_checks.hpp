// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <vector>

#include <caf/error.hpp>

#include "keylane/config.hpp"
#include "keylane/stage.hpp"

namespace keylane::detail {

/// Refuses settings and stages a pipeline cannot run, with what to change.
[[nodiscard]] caf::error check_pipeline(const settings& cfg,
                                        const std::vector<stage_spec>& stages);

} // namespace keylane::detail
