# Part of the install test (included by run_install_test.cmake once a
# consumer was built): the Debian packages the consumer's build used are
# exactly those docs/install.md lists for that kind of
# consumer, in the sentence that starts with `marker`.
#
# Used = the -dev packages (dpkg -S) owning a file the consumer's build read:
# a library on its link line, a header its compile included (the compiler's
# depfile), a CMake package config directory that find_package loaded or a
# library a find module found (the cache's <name>_DIR and _LIBRARY entries). The compiler's own packages (libc, libstdc++;
# clang's headers and sanitizer runtimes) are left out. Listed = the
# backticked names after `marker` up to the end of that sentence.
#
# Needs: consumer_build, README, marker. Skipped (with a message) without dpkg.

find_program(DPKG_EXECUTABLE dpkg)
if(NOT DPKG_EXECUTABLE)
  message(STATUS "install test: no dpkg here; package list not checked")
  return()
endif()

set(used_files "")

# Libraries on the link line (Makefiles: link.txt; Ninja: build.ninja).
set(link_line "")
if(EXISTS "${consumer_build}/CMakeFiles/app.dir/link.txt")
  file(READ "${consumer_build}/CMakeFiles/app.dir/link.txt" link_line)
elseif(EXISTS "${consumer_build}/build.ninja")
  file(STRINGS "${consumer_build}/build.ninja" link_line
       REGEX "LINK_LIBRARIES = ")
endif()
string(REGEX MATCHALL "/[^ \t\r\n\"';]+\\.(so|a)(\\.[0-9.]+)?" libs
       "${link_line}")
list(APPEND used_files ${libs})

# Headers the compile read: the compiler's depfiles (main.cpp.o.d), which
# Ninja moves into its own log (ninja -t deps).
set(dep_texts "")
file(GLOB_RECURSE depfiles "${consumer_build}/CMakeFiles/*.o.d")
foreach(depfile IN LISTS depfiles)
  file(READ "${depfile}" deps)
  list(APPEND dep_texts "${deps}")
endforeach()
if(NOT depfiles AND EXISTS "${consumer_build}/build.ninja")
  find_program(NINJA_EXECUTABLE NAMES ninja ninja-build)
  if(NINJA_EXECUTABLE)
    execute_process(COMMAND "${NINJA_EXECUTABLE}" -C "${consumer_build}"
                            -t deps OUTPUT_VARIABLE deps ERROR_QUIET)
    list(APPEND dep_texts "${deps}")
  endif()
endif()
foreach(deps IN LISTS dep_texts)
  string(REGEX MATCHALL "/usr/[^ \t\r\n\\\\]+" headers "${deps}")
  foreach(h IN LISTS headers)
    get_filename_component(h "${h}" ABSOLUTE) # collapses "..", keeps links
    list(APPEND used_files "${h}")
  endforeach()
endforeach()

# CMake package configs find_package loaded (keylane's own excepted), and
# libraries find modules looked up for them (prometheus-cpp's config asks
# for CURL and ZLIB, whose libraries the consumer does not link; RocksDB's
# for BZip2, and for lz4 and zstd through modules of its own that name
# their cache entries lz4_LIBRARIES and zstd_LIBRARIES): without these
# packages find_package(keylane) fails.
file(STRINGS "${consumer_build}/CMakeCache.txt" found
     REGEX "^[^#]*(_DIR:PATH|_LIBRAR(Y|IES)[A-Z_]*:FILEPATH)=/")
foreach(entry IN LISTS found)
  string(REGEX REPLACE "^[^=]*=" "" path "${entry}")
  if(entry MATCHES "^(CMAKE_|keylane_DIR:)")
    continue()
  endif()
  if(entry MATCHES ":FILEPATH=" OR path MATCHES "/cmake/")
    list(APPEND used_files "${path}")
  endif()
endforeach()

# Only files of this machine's packages; the scratch prefix is no package.
list(FILTER used_files INCLUDE REGEX "^/usr/")
list(REMOVE_DUPLICATES used_files)
if(NOT used_files)
  message(FATAL_ERROR "install test: found no file the consumer's build used "
                      "(no link.txt, build.ninja or depfile?)")
endif()
# dpkg -S exits 1 when some path belongs to no package; the rest are listed.
execute_process(COMMAND "${DPKG_EXECUTABLE}" -S ${used_files}
  OUTPUT_VARIABLE owners ERROR_QUIET)
string(REPLACE "\n" ";" owner_lines "${owners}")
set(used "")
foreach(line IN LISTS owner_lines)
  if(line MATCHES "^diversion" OR NOT line MATCHES ": /")
    continue()
  endif()
  string(REGEX REPLACE ": /.*$" "" pkgs "${line}")
  string(REPLACE ", " ";" pkgs "${pkgs}")
  foreach(pkg IN LISTS pkgs)
    string(REGEX REPLACE ":.*$" "" pkg "${pkg}") # the architecture
    if(pkg MATCHES "-dev$"
       AND NOT pkg MATCHES "^(libc6-dev|linux-libc-dev|libcrypt-dev|libstdc\\+\\+-[0-9]+-dev|libgcc-[0-9]+-dev|libclang-common-[0-9]+-dev|libclang-rt-[0-9]+-dev)$")
      list(APPEND used "${pkg}")
    endif()
  endforeach()
endforeach()
list(REMOVE_DUPLICATES used)
list(SORT used)

file(READ "${README}" readme)
string(FIND "${readme}" "${marker}" at)
if(at EQUAL -1)
  message(FATAL_ERROR "install test: ${README} has no \"${marker}\" "
                      "(the consumer's build used: ${used})")
endif()
string(LENGTH "${marker}" len)
math(EXPR at "${at} + ${len}")
string(SUBSTRING "${readme}" ${at} -1 rest)
string(REGEX REPLACE "\\.([ \n]|$).*" "" sentence "${rest}")
string(REGEX MATCHALL "`[^`]+`" listed "${sentence}")
string(REPLACE "`" "" listed "${listed}")
list(SORT listed)

set(missing ${used})
list(REMOVE_ITEM missing ${listed})
set(extra ${listed})
list(REMOVE_ITEM extra ${used})
if(missing OR extra)
  message(FATAL_ERROR "install test: docs/install.md lists for consumers: "
                      "${listed}; the consumer's build used: ${used}. "
                      "Not listed: ${missing}. Listed but unused: ${extra}.")
endif()
message(STATUS "install test: a consumer needs ${used}, as docs/install.md says")
