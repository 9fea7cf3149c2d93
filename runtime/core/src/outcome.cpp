// SPDX-License-Identifier: Apache-2.0
#include "keylane/outcome.hpp"

namespace keylane {

const char* to_string(outcome x) noexcept {
  switch (x) {
    case outcome::pending: return "pending";
    case outcome::ok: return "ok";
    case outcome::skipped: return "skipped";
    case outcome::failed: return "failed";
    case outcome::parked: return "parked";
  }
  return "unknown";
}

} // namespace keylane
