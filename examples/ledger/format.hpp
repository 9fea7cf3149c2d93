// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstdio>
#include <string>

namespace ledger {

/// printf into a std::string.
template <class... Ts>
std::string format(const char* fmt, Ts... xs) {
  std::string buf(static_cast<size_t>(std::snprintf(nullptr, 0, fmt, xs...)),
                  '\0');
  std::snprintf(buf.data(), buf.size() + 1, fmt, xs...);
  return buf;
}

} // namespace ledger
