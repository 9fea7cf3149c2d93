// SPDX-License-Identifier: Apache-2.0
#pragma once

// What SIGHUP does in the ledger: read the settings again and apply them to
// the running lanes.

#include "lane_settings.hpp"
#include "live_lanes.hpp"

namespace ledger {

/// Reads the `--config` file of `src` again, applies the same `--set`
/// overrides on top (the command line keeps winning) and reloads the
/// runtime in `live` with the result. The runtime logs what it applied,
/// what needs a restart and why it refused; what it would not log at its
/// `log.level`, and what never reaches it (no `--config`, a file that does
/// not validate, no runtime running), this prints on stderr instead, so
/// each outcome shows once.
void reload_on_sighup(const settings_source& src, live_lanes& live);

} // namespace ledger
