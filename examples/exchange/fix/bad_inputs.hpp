// SPDX-License-Identifier: Apache-2.0
#pragma once

// order_entry_load --check-bad-inputs: malformed and invalid requests over
// one session, each followed by a valid order that must still be acked.

#include "load_options.hpp"

namespace exchange {
namespace load {

/// Runs every case over LOAD1, prints PASS/FAIL per case; true if all pass.
bool check_bad_inputs(const load_options& o);

} // namespace load
} // namespace exchange
