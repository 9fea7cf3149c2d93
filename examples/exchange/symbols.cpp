// SPDX-License-Identifier: Apache-2.0
#include "symbols.hpp"

#include <cstdio>

namespace exchange {

std::string symbol_table::name(uint32_t i) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "S%04u", i);
  return buf;
}

bool symbol_table::listed(const std::string& s) const {
  if (s.size() < 5 || s[0] != 'S')
    return false;
  uint64_t n = 0;
  for (size_t i = 1; i < s.size(); ++i) {
    if (s[i] < '0' || s[i] > '9' || i > 10)
      return false;
    n = n * 10 + static_cast<uint64_t>(s[i] - '0');
  }
  return n < count_ && s == name(static_cast<uint32_t>(n));
}

} // namespace exchange
