# Smoke-runs each example in CTest (CAF's examples/ habit): one line per example
# at the bottom. An example counts as passing when it exits with 0 *and* prints
# what it must; PASS_REGULAR_EXPRESSION alone ignores the exit code, so an
# example that printed its result and then crashed in shutdown would pass.
#
# Included by tests/CMakeLists.txt this file adds the tests; run as `cmake -P`
# it is the check itself: -DPASS=<regex> -P examples_smoke.cmake -- <exe> <args...>

if(CMAKE_SCRIPT_MODE_FILE)
  include("${CMAKE_CURRENT_LIST_DIR}/script_args.cmake")
  keylane_command_after_dashes(cmd)
  if(NOT cmd)
    message(FATAL_ERROR "usage: cmake -DPASS=<regex> -P examples_smoke.cmake -- <exe> [args...]")
  endif()
  execute_process(COMMAND ${cmd} RESULT_VARIABLE rc
    OUTPUT_VARIABLE out ERROR_VARIABLE out)
  message("${out}")
  if(NOT rc STREQUAL "0")
    message(FATAL_ERROR "example failed: '${cmd}' exited with ${rc}")
  endif()
  if(NOT out MATCHES "${PASS}")
    message(FATAL_ERROR "example failed: '${cmd}' printed nothing matching /${PASS}/")
  endif()
  return()
endif()

# Test names with spaces and parentheses need policy CMP0110 (CMake 3.19), which
# CMake reads as it stands at the end of the directory. The project asks for
# 3.16 and include() scopes policies to this file, so defer setting it for the
# whole directory to the directory's end.
if(POLICY CMP0110)
  cmake_language(DEFER CALL cmake_policy SET CMP0110 NEW)
endif()

set(keylane_smoke_script "${CMAKE_CURRENT_LIST_FILE}")

# Adds the test "example: <name>" when the example's target exists: runs the
# target with the arguments after `pass_regex`; its output must match that.
function(keylane_smoke_example name target pass_regex)
  if(NOT TARGET ${target})
    return()
  endif()
  add_test(NAME "example: ${name}"
    COMMAND ${CMAKE_COMMAND} "-DPASS=${pass_regex}"
            -P "${keylane_smoke_script}" -- $<TARGET_FILE:${target}> ${ARGN})
  set_tests_properties("example: ${name}" PROPERTIES LABELS "example" TIMEOUT 300)
endfunction()

#                     test name  target  must print    arguments
keylane_smoke_example(ledger     ledger  "key_lanes"   --json)
keylane_smoke_example("ledger with its config file" ledger "key_lanes"
  --json --config ${PROJECT_SOURCE_DIR}/examples/ledger/ledger.toml)
