// SPDX-License-Identifier: Apache-2.0
#pragma once

// Which malloc this binary runs with: keylane_bench links mimalloc,
// keylane_bench_sysalloc (same sources) does not.

#include <string>

namespace keylane::bench {

/// "mimalloc" or "system".
[[nodiscard]] std::string allocator_name();

/// One line for the report, saying whether malloc really is mimalloc's.
[[nodiscard]] std::string allocator_note();

} // namespace keylane::bench
