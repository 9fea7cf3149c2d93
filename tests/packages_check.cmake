# The Debian package lists (scripts/packages/*.txt) and what needs them:
#   1. every package is in exactly one list;
#   2. `make run` installs the library's and the ledger's lists only, and
#      those hold none of the test, example or fuzz packages;
#   3. the project configures as `make run` configures it on a machine
#      without Catch2, Boost, QuickFIX and librdkafka (CMake's
#      CMAKE_DISABLE_FIND_PACKAGE_<name> stands for a missing package), and
#      the ledger is a target there;
#   4. with the tests on, a missing test package fails the configure instead
#      of dropping tests.
#   cmake -DSOURCE_DIR=<repo> -DWORK_DIR=<scratch> [-DGENERATOR=...] [-DCXX_COMPILER=...]
#         -P packages_check.cmake
cmake_minimum_required(VERSION 3.16)
foreach(var SOURCE_DIR WORK_DIR)
  if(NOT ${var})
    message(FATAL_ERROR "packages_check.cmake: pass -D${var}=...")
  endif()
endforeach()

# 1. One list per package.
file(GLOB lists "${SOURCE_DIR}/scripts/packages/*.txt")
set(seen "")
foreach(list IN LISTS lists)
  get_filename_component(name "${list}" NAME_WE)
  file(STRINGS "${list}" lines)
  foreach(line IN LISTS lines)
    if(line MATCHES "^[ \t]*(#|$)")
      continue()
    endif()
    string(REGEX REPLACE "[ \t].*$" "" pkg "${line}")
    if(DEFINED owner_${pkg})
      message(FATAL_ERROR "packages check: ${pkg} is in both ${owner_${pkg}}.txt and ${name}.txt")
    endif()
    set(owner_${pkg} "${name}")
    list(APPEND seen "${pkg}")
  endforeach()
endforeach()
foreach(needed library ledger kafka examples tests fuzz)
  if(NOT EXISTS "${SOURCE_DIR}/scripts/packages/${needed}.txt")
    message(FATAL_ERROR "packages check: no scripts/packages/${needed}.txt")
  endif()
endforeach()

# 2. What `make run` installs.
execute_process(COMMAND make -n -C "${SOURCE_DIR}" run
  RESULT_VARIABLE rc OUTPUT_VARIABLE plan ERROR_VARIABLE plan)
if(NOT plan MATCHES "scripts/deps\\.sh library ledger\n")
  message(FATAL_ERROR "packages check: `make run` does not install the library and ledger lists alone:\n${plan}")
endif()
if(plan MATCHES "scripts/deps\\.sh\n")
  message(FATAL_ERROR "packages check: `make run` installs every list:\n${plan}")
endif()
execute_process(COMMAND bash "${SOURCE_DIR}/scripts/deps.sh" --print library ledger
  RESULT_VARIABLE rc OUTPUT_VARIABLE run_packages)
if(NOT rc STREQUAL "0")
  message(FATAL_ERROR "packages check: scripts/deps.sh --print failed (${rc})")
endif()
string(REPLACE "\n" ";" run_packages "${run_packages}")
foreach(pkg catch2 chromium clang libclang-rt-14-dev libquickfix-dev
            libboost-dev gnuplot-nox librdkafka-dev)
  if(pkg IN_LIST run_packages)
    message(FATAL_ERROR "packages check: `make run` would install ${pkg}")
  endif()
endforeach()

# 3. and 4. Configure as `make run` does, then with the tests, without the
# packages of the other lists.
set(common -S "${SOURCE_DIR}" -DCMAKE_BUILD_TYPE=RelWithDebInfo
  -DCMAKE_DISABLE_FIND_PACKAGE_Catch2=ON
  -DCMAKE_DISABLE_FIND_PACKAGE_Boost=ON
  -DCMAKE_DISABLE_FIND_PACKAGE_QuickFIX=ON
  -DCMAKE_DISABLE_FIND_PACKAGE_PkgConfig=ON) # pkg-config finds librdkafka
if(GENERATOR)
  list(APPEND common -G "${GENERATOR}")
endif()
if(CXX_COMPILER)
  list(APPEND common "-DCMAKE_CXX_COMPILER=${CXX_COMPILER}")
endif()
file(REMOVE_RECURSE "${WORK_DIR}")
execute_process(COMMAND "${CMAKE_COMMAND}" ${common} -B "${WORK_DIR}/run"
                        -DKEYLANE_BUILD_TESTS=OFF
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
if(NOT rc STREQUAL "0")
  message("${out}")
  message(FATAL_ERROR "packages check: the project does not configure as `make run` does without the test and example packages")
endif()
execute_process(COMMAND "${CMAKE_COMMAND}" --build "${WORK_DIR}/run" --target help
  OUTPUT_VARIABLE targets ERROR_VARIABLE targets)
if(NOT targets MATCHES "(^|[\n .])ledger([\n:]|$)")
  message(FATAL_ERROR "packages check: no ledger target in the `make run` configuration:\n${targets}")
endif()
execute_process(COMMAND "${CMAKE_COMMAND}" ${common} -B "${WORK_DIR}/test"
                        -DKEYLANE_BUILD_TESTS=ON
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
if(rc STREQUAL "0")
  message(FATAL_ERROR "packages check: with the tests on, the project configured without Catch2, Boost and QuickFIX: tests would be dropped")
endif()
file(REMOVE_RECURSE "${WORK_DIR}")
message(STATUS "packages check: `make run` needs the library and ledger lists only")
