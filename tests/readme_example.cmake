# Checks that the README's first C++ block is examples/readme/main.cpp, word
# for word but its SPDX licence line, so the example users copy is the one
# CTest builds and runs.
# With CONFIG, also that its first TOML block is that file (the app.toml the
# example's output depends on).
#   cmake -DREADME=<README.md> -DSOURCE=<main.cpp> [-DCONFIG=<app.toml>] -P readme_example.cmake
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

# The config it needs: the README's first TOML block is CONFIG, word for word,
# so the output the README shows is what that file makes the program print.
if(CONFIG)
  file(READ "${CONFIG}" config)
  string(FIND "${readme}" "```toml\n" start)
  if(start EQUAL -1)
    message(FATAL_ERROR "${README}: no ```toml block (the example's ${CONFIG})")
  endif()
  math(EXPR start "${start} + 8")
  string(SUBSTRING "${readme}" ${start} -1 rest)
  string(FIND "${rest}" "```" stop)
  string(SUBSTRING "${rest}" 0 ${stop} block)
  if(NOT block STREQUAL config)
    file(WRITE "${CMAKE_CURRENT_BINARY_DIR}/readme_block.toml" "${block}")
    message(FATAL_ERROR "the README's first TOML block differs from ${CONFIG}: "
      "copy the file into the README (the block is in "
      "${CMAKE_CURRENT_BINARY_DIR}/readme_block.toml; diff them)")
  endif()
endif()
