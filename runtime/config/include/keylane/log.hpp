// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <functional>
#include <string_view>

#include "keylane/config.hpp"

namespace keylane {

/// Receives the runtime's log lines: one complete line per call, without a
/// trailing newline, only for levels at or above `log.level`. Called from
/// keylane's own threads (actor workers, the consumer thread, the thread
/// that calls `reload`), never two calls at once for one runtime, so a
/// writer needs no lock of its own; it must not call back into the runtime.
using log_writer = std::function<void(log_level level, std::string_view line)>;

/// The default writer: "keylane <level>: <line>" on stderr, one write each.
[[nodiscard]] log_writer stderr_log_writer();

} // namespace keylane
