# Builds four small outside projects against this build, installed into a
# scratch prefix (fmt's find-package test): the core alone, the core with the
# state, sqlite and metrics components, the test kit, and the Kafka source. Catches what only users would see: a header
# or config file that is not installed, an export that names a missing target,
# a version file that rejects `find_package(keylane 0.2)`.

# Test names with spaces and parentheses need policy CMP0110 (CMake 3.19), which
# CMake reads as it stands at the end of the directory. The project asks for
# 3.16 and include() scopes policies to this file, so defer setting it for the
# whole directory to the directory's end.
if(POLICY CMP0110)
  cmake_language(DEFER CALL cmake_policy SET CMP0110 NEW)
endif()

add_test(NAME "install: find_package(keylane) from outside projects, by component"
  COMMAND ${CMAKE_COMMAND}
    "-DBUILD_DIR=${keylane_BINARY_DIR}"
    "-DWORK_DIR=${CMAKE_CURRENT_BINARY_DIR}/install_test"
    "-DCONSUMERS_DIR=${CMAKE_CURRENT_LIST_DIR}/install"
    "-DKAFKA=$<TARGET_EXISTS:keylane_kafka>"
    "-DREADME=${PROJECT_SOURCE_DIR}/docs/install.md"
    "-DCONFIG=$<CONFIG>"
    "-DGENERATOR=${CMAKE_GENERATOR}"
    "-DCXX_COMPILER=${CMAKE_CXX_COMPILER}"
    "-DSANITIZERS=${KEYLANE_SANITIZERS}"
    -P "${CMAKE_CURRENT_LIST_DIR}/install/run_install_test.cmake")
set_tests_properties("install: find_package(keylane) from outside projects, by component"
  PROPERTIES LABELS "install" TIMEOUT 900)
