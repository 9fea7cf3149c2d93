// SPDX-License-Identifier: Apache-2.0
#pragma once

// Where the member program is: compiled into one file only, so that its
// absolute path keeps out of the other test files' compiler-cache keys.

namespace kafka_test {

/// The path of the `kafka_member` executable this build made.
[[nodiscard]] const char* member_path() noexcept;

} // namespace kafka_test
