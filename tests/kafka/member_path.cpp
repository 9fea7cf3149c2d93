// SPDX-License-Identifier: Apache-2.0
#include "member_path.hpp"

namespace kafka_test {

const char* member_path() noexcept {
  return KEYLANE_KAFKA_MEMBER;
}

} // namespace kafka_test
