# The install test (see ../install_test.cmake), run as `cmake -P` by CTest:
#   1. cmake --install BUILD_DIR --prefix WORK_DIR/prefix
#   2. for each outside project of CONSUMERS (subfolders of this folder:
#      core, the core alone; state, with the state, sqlite and metrics
#      components; testing, with the test kit; kafka, with the Kafka
#      source): configure it with
#      CMAKE_PREFIX_PATH=that prefix, and check that find_package(keylane)
#      found it there and nowhere else
#   3. build it and run its app, checking what it prints
#   4. check that docs/install.md's list of the Debian packages that consumer needs
#      is what its build used (check_packages.cmake)
#   5. build the same program again with the compiler alone and
#      `pkg-config --cflags --libs` of its keylane packages (the installed
#      keylane*.pc), run it and check what it prints again
# Any failing step fails the test with that step's output.
#
# Arguments (-D): BUILD_DIR, WORK_DIR, CONSUMERS_DIR, README (required);
# KAFKA (ON when keylane::kafka was built: the kafka consumer runs);
# CONFIG, GENERATOR, CXX_COMPILER (those of the keylane build, so the
# consumers are built alike); SANITIZERS (KEYLANE_SANITIZERS: a sanitized
# static library needs the sanitizer runtime in the consumer's link too).
cmake_minimum_required(VERSION 3.16)

foreach(var BUILD_DIR WORK_DIR CONSUMERS_DIR README)
  if(NOT ${var})
    message(FATAL_ERROR "run_install_test.cmake: pass -D${var}=...")
  endif()
endforeach()

set(prefix "${WORK_DIR}/prefix")
# Start from nothing, so a file left by an earlier run cannot hide a missing one.
file(REMOVE_RECURSE "${WORK_DIR}")
file(MAKE_DIRECTORY "${WORK_DIR}")

# Runs one step; on failure stops the test with the step's output.
function(run_step what)
  message(STATUS "install test: ${what}")
  execute_process(COMMAND ${ARGN}
    RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
  if(NOT rc STREQUAL "0")
    message("${out}")
    message(FATAL_ERROR "install test: ${what} failed (${rc}); its output is above")
  endif()
  set(step_output "${out}" PARENT_SCOPE)
endfunction()

set(config_args "")
if(CONFIG)
  set(config_args --config "${CONFIG}")
endif()

run_step("install ${BUILD_DIR} into ${prefix}"
  "${CMAKE_COMMAND}" --install "${BUILD_DIR}" --prefix "${prefix}" ${config_args})

# One outside project: configure, check where keylane came from, build, run
# (with ARGS), match each of the regexes after EXPECT, check its packages
# against the docs/install.md sentence that starts with MARKER.
function(run_consumer name)
  cmake_parse_arguments(arg "" "MARKER" "ARGS;EXPECT;PKGS" ${ARGN})
  set(consumer_build "${WORK_DIR}/${name}-build")
  set(configure_args
    -S "${CONSUMERS_DIR}/${name}" -B "${consumer_build}"
    "-DCMAKE_PREFIX_PATH=${prefix}"
    # Only the prefix may provide keylane: no user or system package registry.
    -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF
    -DCMAKE_FIND_USE_SYSTEM_PACKAGE_REGISTRY=OFF)
  if(GENERATOR)
    list(APPEND configure_args -G "${GENERATOR}")
  endif()
  if(CXX_COMPILER)
    list(APPEND configure_args "-DCMAKE_CXX_COMPILER=${CXX_COMPILER}")
  endif()
  if(CONFIG)
    list(APPEND configure_args "-DCMAKE_BUILD_TYPE=${CONFIG}")
  endif()
  if(SANITIZERS)
    list(APPEND configure_args
      "-DCMAKE_CXX_FLAGS=-fsanitize=${SANITIZERS} -fno-omit-frame-pointer"
      "-DCMAKE_EXE_LINKER_FLAGS=-fsanitize=${SANITIZERS}")
  endif()
  run_step("configure the ${name} consumer" "${CMAKE_COMMAND}" ${configure_args})

  # find_package must have used the scratch prefix, not an older install elsewhere.
  file(STRINGS "${consumer_build}/CMakeCache.txt" keylane_dir REGEX "^keylane_DIR:")
  string(REGEX REPLACE "^keylane_DIR:[A-Z]+=" "" keylane_dir "${keylane_dir}")
  file(REAL_PATH "${prefix}" real_prefix)
  if(EXISTS "${keylane_dir}")
    file(REAL_PATH "${keylane_dir}" keylane_dir)
  endif()
  string(FIND "${keylane_dir}" "${real_prefix}/" at)
  if(NOT at EQUAL 0)
    message(FATAL_ERROR "install test: the ${name} consumer found keylane at "
                        "'${keylane_dir}', not in the scratch prefix '${real_prefix}'")
  endif()

  run_step("build the ${name} consumer"
    "${CMAKE_COMMAND}" --build "${consumer_build}" ${config_args})

  set(app "${consumer_build}/app")
  if(NOT EXISTS "${app}" AND CONFIG)
    set(app "${consumer_build}/${CONFIG}/app")
  endif()
  run_step("run ${app}" "${app}" ${arg_ARGS})
  message("${step_output}")
  foreach(expected IN LISTS arg_EXPECT)
    if(NOT step_output MATCHES "${expected}")
      message(FATAL_ERROR "install test: the ${name} consumer's output lacks /${expected}/")
    endif()
  endforeach()
  set(marker "${arg_MARKER}")
  include("${CMAKE_CURRENT_LIST_DIR}/check_packages.cmake")

  # The same program through pkg-config, with the flags it gives alone.
  set(ENV{PKG_CONFIG_PATH} "${pc_dir}")
  run_step("pkg-config --cflags --libs ${arg_PKGS}"
    "${PKG_CONFIG}" --cflags --libs ${arg_PKGS})
  string(STRIP "${step_output}" pc_flags)
  message(STATUS "install test: pkg-config says: ${pc_flags}")
  string(FIND "${pc_flags}" "-L${pc_prefix_real}/" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "install test: pkg-config's flags for ${arg_PKGS} do "
                        "not name the scratch prefix's libraries: ${pc_flags}")
  endif()
  separate_arguments(pc_flags UNIX_COMMAND "${pc_flags}")
  set(sanitize "")
  if(SANITIZERS)
    set(sanitize "-fsanitize=${SANITIZERS}" -fno-omit-frame-pointer)
  endif()
  set(pc_app "${WORK_DIR}/${name}-pkgconfig-app")
  run_step("build the ${name} consumer with pkg-config's flags"
    "${CXX_COMPILER}" -std=c++17 ${sanitize} "${CONSUMERS_DIR}/${name}/main.cpp"
    ${pc_flags} -o "${pc_app}")
  run_step("run ${pc_app}" "${pc_app}" ${arg_ARGS})
  foreach(expected IN LISTS arg_EXPECT)
    if(NOT step_output MATCHES "${expected}")
      message(FATAL_ERROR "install test: the ${name} consumer built with "
                          "pkg-config's flags lacks /${expected}/ in its output")
    endif()
  endforeach()
endfunction()

# pkg-config's files: where the install put them, and what resolves the
# prefix they compute from their own place.
find_program(PKG_CONFIG pkg-config REQUIRED)
file(GLOB_RECURSE core_pc "${prefix}/*/keylane.pc")
if(NOT core_pc)
  message(FATAL_ERROR "install test: no keylane.pc under ${prefix}")
endif()
get_filename_component(pc_dir "${core_pc}" DIRECTORY)
file(REAL_PATH "${prefix}" pc_prefix_real)
if(NOT CXX_COMPILER)
  set(CXX_COMPILER c++)
endif()


run_consumer(core
  PKGS keylane
  MARKER "A program that uses the core alone needs these Debian packages:"
  EXPECT "keylane [0-9]+\\.[0-9]+\\.[0-9]+"
         "error_code\\(errc::window_full\\) = keylane:1"
         "sum of doubled 1..3 = 12"
         "without keylane::sqlite: invalid_config: park.store = \"sqlite\" needs keylane's SQLite park store, which this program does not link: link keylane::sqlite")
run_consumer(state
  PKGS keylane-state keylane-sqlite keylane-metrics
  MARKER "With the state, sqlite and metrics components it needs these Debian packages:"
  ARGS "${WORK_DIR}/park.db"
  EXPECT "stable_hash\\(\"acct-1\"\\) = [0-9]+"
         "to_string\\(errc::window_full\\) = window_full"
         "sum of doubled 1..3 = 12"
         "state of acct-1 after a reopen = state bytes")
run_consumer(testing
  PKGS keylane-testing
  MARKER "With the testing component it needs these Debian packages:"
  EXPECT "kit: ok 42 at 50 ms")
if(KAFKA)
  run_consumer(kafka
    PKGS keylane-kafka
    MARKER "With the kafka component it needs these Debian packages:"
    EXPECT "mock cluster at 127\\.0\\.0\\.1:[0-9]+.* has topic ledger"
           "committable after 0 and 1 of 0..2 = 2")
else()
  message(STATUS "install test: keylane::kafka was not built; no kafka consumer")
endif()
message(STATUS "install test: passed")
