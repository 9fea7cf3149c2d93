// SPDX-License-Identifier: Apache-2.0
#include "keylane/log.hpp"

#include <cstdio>
#include <string>

namespace keylane {

log_writer stderr_log_writer() {
  return [](log_level level, std::string_view line) {
    // One fwrite per line, so lines of different runtimes do not interleave.
    std::string out = "keylane ";
    out += to_string(level);
    out += ": ";
    out += line;
    out += '\n';
    std::fwrite(out.data(), 1, out.size(), stderr);
    std::fflush(stderr);
  };
}

} // namespace keylane
