# The ordered export's smoke check, run by CTest as
#   cmake -DEXE=<ordered_export> -P smoke_check.cmake
# Runs `ordered_export --quick --json` and checks that it exits with 0, that
# it prints one JSON object per mode with every promised member, and that
# no mode put an output out of order. Without string(JSON) (CMake < 3.19)
# it checks the members with regular expressions instead.

if(NOT EXE)
  message(FATAL_ERROR "usage: cmake -DEXE=<ordered_export> -P smoke_check.cmake")
endif()
execute_process(COMMAND ${EXE} --quick --json RESULT_VARIABLE rc
  OUTPUT_VARIABLE out ERROR_VARIABLE err)
message("${out}${err}")
if(NOT rc STREQUAL "0")
  message(FATAL_ERROR "ordered_export --quick --json exited with ${rc}, not 0")
endif()

set(modes unordered global_unbounded global_window_64 per_key global_auto
  global_window_64_spill global_window_64_timeout)
set(members total_s first_result_s peak_buffered spilled idle_share
  tombstones violations)

string(REGEX REPLACE "\n$" "" out "${out}")
string(REPLACE "\n" ";" lines "${out}")
set(seen "")
foreach(line IN LISTS lines)
  if(CMAKE_VERSION VERSION_GREATER_EQUAL 3.19)
    string(JSON mode ERROR_VARIABLE jerr GET "${line}" mode)
    if(jerr)
      message(FATAL_ERROR "not a JSON object with a mode: '${line}' (${jerr})")
    endif()
    foreach(m IN LISTS members)
      string(JSON value ERROR_VARIABLE jerr GET "${line}" ${m})
      if(jerr)
        message(FATAL_ERROR "${mode}: no member ${m}: '${line}'")
      endif()
      set(${m} "${value}")
    endforeach()
  else()
    if(NOT line MATCHES "\"mode\": \"([a-z0-9_]+)\"")
      message(FATAL_ERROR "no mode in '${line}'")
    endif()
    set(mode "${CMAKE_MATCH_1}")
    foreach(m IN LISTS members)
      if(NOT line MATCHES "\"${m}\": ([0-9.]+)")
        message(FATAL_ERROR "${mode}: no member ${m}: '${line}'")
      endif()
      set(${m} "${CMAKE_MATCH_1}")
    endforeach()
  endif()
  if(NOT violations EQUAL 0)
    message(FATAL_ERROR "${mode}: ${violations} outputs out of order")
  endif()
  list(APPEND seen ${mode})
endforeach()
if(NOT seen STREQUAL "${modes}")
  message(FATAL_ERROR "modes printed: '${seen}', expected '${modes}'")
endif()
