// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <chrono>
#include <cstdio>
#include <string>

namespace keylane::detail {

/// "1.52 s": a duration as the stall log writes it.
inline std::string seconds_text(std::chrono::steady_clock::duration d) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.2f s",
                std::chrono::duration<double>(d).count());
  return buf;
}

} // namespace keylane::detail
