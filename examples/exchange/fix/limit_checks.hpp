// SPDX-License-Identifier: Apache-2.0
#pragma once

// order_entry_load --check-limits: connections that try to make the server
// keep what it should not, over raw sockets, each of which the server must
// drop.

#include "load_options.hpp"

namespace exchange {
namespace load {

/// Runs every case, prints PASS/FAIL per case; true if all pass.
bool check_limits(const load_options& o);

} // namespace load
} // namespace exchange
