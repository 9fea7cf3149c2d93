# Checks that the README's first C++ block is examples/readme/main.cpp, word
# for word but its SPDX licence line, so the example users copy is the one
# CTest builds and runs.
#   cmake -DREADME=<README.md> -DSOURCE=<main.cpp> -P readme_example.cmake
file(READ "${README}" readme)
file(READ "${SOURCE}" source)
# The file's licence line is no part of what users copy.
string(REGEX REPLACE "^// SPDX-License-Identifier: [^\n]*\n" "" source "${source}")
string(FIND "${readme}" "```cpp\n" start)
if(start EQUAL -1)
  message(FATAL_ERROR "${README}: no ```cpp block")
endif()
math(EXPR start "${start} + 7")
string(SUBSTRING "${readme}" ${start} -1 rest)
string(FIND "${rest}" "```" stop)
string(SUBSTRING "${rest}" 0 ${stop} block)
if(NOT block STREQUAL source)
  file(WRITE "${CMAKE_CURRENT_BINARY_DIR}/readme_block.cpp" "${block}")
  message(FATAL_ERROR "the README's first C++ block differs from ${SOURCE}: "
    "copy the file into the README (the block is in "
    "${CMAKE_CURRENT_BINARY_DIR}/readme_block.cpp; diff them)")
endif()
