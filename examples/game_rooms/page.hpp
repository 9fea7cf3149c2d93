// SPDX-License-Identifier: Apache-2.0
#pragma once

// The one page the server serves at `GET /`: joins a room over the
// WebSocket, draws it on a canvas, moves with the arrow keys.

#include <string>

namespace game {

/// The page's HTML, plain JavaScript inside.
[[nodiscard]] const std::string& page_html();

} // namespace game
