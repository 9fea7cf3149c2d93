# What a company checks before it adopts a library, checked on every run:
#   - LICENSE holds the Apache License 2.0, and README.md says so;
#   - every C++ source starts with `// SPDX-License-Identifier: Apache-2.0`;
#   - CHANGELOG.md has a section for the version project() sets.
#   cmake -DSOURCE_DIR=<repo> -DVERSION=<project version> -P release_check.cmake
foreach(var SOURCE_DIR VERSION)
  if(NOT ${var})
    message(FATAL_ERROR "release_check.cmake: pass -D${var}=...")
  endif()
endforeach()
set(problems "")

# The licence.
if(NOT EXISTS "${SOURCE_DIR}/LICENSE")
  list(APPEND problems "no LICENSE file")
else()
  file(READ "${SOURCE_DIR}/LICENSE" licence)
  if(NOT licence MATCHES "Apache License[ \n]+Version 2.0, January 2004")
    list(APPEND problems "LICENSE is not the Apache License 2.0")
  endif()
endif()
file(READ "${SOURCE_DIR}/README.md" readme)
if(NOT readme MATCHES "\n## Licence\n[^#]*Apache License 2\\.0[^#]*\\(LICENSE\\)")
  list(APPEND problems "README.md has no \"## Licence\" section naming the Apache License 2.0 and linking LICENSE")
endif()

# SPDX headers, on every source of the library, its tools, examples,
# benchmarks and tests.
set(pending)
set(spdx "// SPDX-License-Identifier: Apache-2.0")
set(missing "")
set(checked 0)
file(GLOB_RECURSE sources RELATIVE "${SOURCE_DIR}"
  "${SOURCE_DIR}/runtime/*.cpp" "${SOURCE_DIR}/runtime/*.hpp"
  "${SOURCE_DIR}/actors/*.cpp" "${SOURCE_DIR}/actors/*.hpp"
  "${SOURCE_DIR}/kafka/*.cpp" "${SOURCE_DIR}/kafka/*.hpp"
  "${SOURCE_DIR}/tools/*.cpp" "${SOURCE_DIR}/tools/*.hpp"
  "${SOURCE_DIR}/examples/*.cpp" "${SOURCE_DIR}/examples/*.hpp"
  "${SOURCE_DIR}/bench/*.cpp" "${SOURCE_DIR}/bench/*.hpp"
  "${SOURCE_DIR}/tests/*.cpp" "${SOURCE_DIR}/tests/*.hpp"
  "${SOURCE_DIR}/cmake/*.in")
foreach(f IN LISTS sources)
  if(f MATCHES "^cmake/keylane-config")
    continue() # CMake code, not C++
  endif()
  if(f MATCHES "^cmake/keylane\\.pc\\.in$")
    # pkg-config's format, whose comments start with '#'.
    file(STRINGS "${SOURCE_DIR}/${f}" first LIMIT_COUNT 1)
    if(NOT first STREQUAL "# SPDX-License-Identifier: Apache-2.0")
      list(APPEND missing "${f}")
    endif()
    math(EXPR checked "${checked} + 1")
    continue()
  endif()
  set(skip FALSE)
  foreach(p IN LISTS pending)
    if(f MATCHES "${p}")
      set(skip TRUE)
    endif()
  endforeach()
  if(skip)
    continue()
  endif()
  math(EXPR checked "${checked} + 1")
  file(STRINGS "${SOURCE_DIR}/${f}" first LIMIT_COUNT 1)
  if(NOT first STREQUAL spdx)
    list(APPEND missing "${f}")
  endif()
endforeach()
if(missing)
  list(LENGTH missing n)
  string(REPLACE ";" "\n  " missing "${missing}")
  list(APPEND problems
    "${n} C++ sources do not start with \"${spdx}\":\n  ${missing}")
endif()

# The changelog.
if(NOT EXISTS "${SOURCE_DIR}/CHANGELOG.md")
  list(APPEND problems "no CHANGELOG.md")
else()
  file(READ "${SOURCE_DIR}/CHANGELOG.md" changelog)
  string(REPLACE "." "\\." version_re "${VERSION}")
  if(NOT changelog MATCHES "\n## \\[${version_re}\\] - [0-9]+-[0-9]+-[0-9]+\n")
    list(APPEND problems "CHANGELOG.md has no \"## [${VERSION}] - YYYY-MM-DD\" section for the version project() sets")
  endif()
  if(NOT changelog MATCHES "\n## \\[Unreleased\\]\n")
    list(APPEND problems "CHANGELOG.md has no \"## [Unreleased]\" section")
  endif()
endif()

if(problems)
  string(REPLACE ";" "\n- " problems "${problems}")
  message(FATAL_ERROR "release check:\n- ${problems}")
endif()
message(STATUS "release check: LICENSE, README licence, ${checked} SPDX "
               "headers and CHANGELOG [${VERSION}] in place")
