// SPDX-License-Identifier: Apache-2.0
// keylane/version.hpp carries the version of project() in CMakeLists.txt,
// its one home (CMake passes it here as KEYLANE_PROJECT_VERSION to compare).
#include <catch2/catch.hpp>

#include <string>

#include "keylane/version.hpp"

TEST_CASE("the version header states the version CMake's project() sets",
          "[version]") {
  CHECK(std::string{keylane::version} == KEYLANE_PROJECT_VERSION);
  CHECK(std::string{KEYLANE_VERSION} == KEYLANE_PROJECT_VERSION);
  std::string parts = std::to_string(KEYLANE_VERSION_MAJOR) + "."
                      + std::to_string(KEYLANE_VERSION_MINOR) + "."
                      + std::to_string(KEYLANE_VERSION_PATCH);
  CHECK(parts == KEYLANE_VERSION);
  CHECK(KEYLANE_VERSION_NUMBER
        == KEYLANE_VERSION_MAJOR * 10000 + KEYLANE_VERSION_MINOR * 100
             + KEYLANE_VERSION_PATCH);
}
