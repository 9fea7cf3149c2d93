# README.md as a new user reads it (issue: "an honest README"):
#   - "When not to use keylane" comes before the example;
#   - the benchmark section names every baseline, the CPU, the build type
#     and the noise;
#   - the exactly-once guarantee says it is inside the process, and gives
#     the Kafka state caveat;
#   - "Choosing order, window and cap" and "Threads keylane starts" exist,
#     the latter naming the settings that size the threads;
#   - every local link resolves inside the repository (no ../shared/).
#   cmake -DSOURCE_DIR=<repo> -P readme_check.cmake
cmake_minimum_required(VERSION 3.16)
if(NOT SOURCE_DIR)
  message(FATAL_ERROR "readme_check.cmake: pass -DSOURCE_DIR=...")
endif()
file(READ "${SOURCE_DIR}/README.md" readme)
set(problems "")

# The text of the section headed `title` (up to the next "## ").
function(section title out)
  string(FIND "${readme}" "\n## ${title}\n" at)
  if(at EQUAL -1)
    set(${out} "" PARENT_SCOPE)
    return()
  endif()
  string(SUBSTRING "${readme}" ${at} -1 rest)
  string(SUBSTRING "${rest}" 1 -1 rest)
  string(FIND "${rest}" "\n## " stop)
  string(SUBSTRING "${rest}" 0 ${stop} text)
  set(${out} "${text}" PARENT_SCOPE)
endfunction()

function(position title out)
  string(FIND "${readme}" "\n## ${title}\n" at)
  set(${out} ${at} PARENT_SCOPE)
endfunction()

position("When not to use keylane" when_not)
position("Example" example)
if(when_not EQUAL -1 OR NOT when_not LESS example)
  list(APPEND problems "no \"## When not to use keylane\" section before \"## Example\"")
endif()
section("When not to use keylane" text)
foreach(needle "hash-partitioned" "single thread")
  string(FIND "${text}" "${needle}" at)
  if(at EQUAL -1)
    list(APPEND problems "\"When not to use keylane\" does not mention ${needle}")
  endif()
endforeach()

section("Benchmarks" bench)
foreach(needle "shared queue" "hash partitions" "asio strand" "naive CAF"
               "one thread" "Release build" "±")
  string(FIND "${bench}" "${needle}" at)
  if(at EQUAL -1)
    list(APPEND problems "the Benchmarks section does not name \"${needle}\"")
  endif()
endforeach()
# The CPU the figures came from, whichever it was.
if(NOT bench MATCHES "(Intel|AMD|Xeon|EPYC|Ryzen|Arm|Graviton|Ampere)")
  list(APPEND problems "the Benchmarks section does not name the CPU model")
endif()

section("Guarantees" guarantees)
foreach(needle "exactly once, inside this process" "restarts on its own state directory")
  string(FIND "${guarantees}" "${needle}" at)
  if(at EQUAL -1)
    list(APPEND problems "the Guarantees section does not say \"${needle}\"")
  endif()
endforeach()

section("Choosing order, window and cap" choosing)
foreach(needle "runtime.order" "runtime.window" "max_active_keys" "Little's law")
  string(FIND "${choosing}" "${needle}" at)
  if(at EQUAL -1)
    list(APPEND problems "\"Choosing order, window and cap\" does not cover ${needle}")
  endif()
endforeach()

section("Threads keylane starts" threads)
foreach(needle "worker threads" "clock thread" "consumer thread"
               "state writer thread" "metrics endpoint" "Kafka source")
  string(FIND "${threads}" "${needle}" at)
  if(at EQUAL -1)
    list(APPEND problems "\"Threads keylane starts\" does not list the ${needle}")
  endif()
endforeach()
# ... and names the settings that size them.
foreach(key "scheduler.threads" "metrics.threads")
  string(FIND "${threads}" "`${key}`" at)
  if(at EQUAL -1)
    list(APPEND problems "\"Threads keylane starts\" does not name `${key}`")
  endif()
endforeach()

# Local links: [text](path) and `../` paths must exist in the repository.
# Square brackets would nest CMake list elements: take them out first.
string(REPLACE "[" "<" plain "${readme}")
string(REPLACE "]" ">" plain "${plain}")
string(REGEX MATCHALL ">\\(([A-Za-z0-9_/.-]+\\.[a-z]+|LICENSE)[)#]" links "${plain}")
foreach(link IN LISTS links)
  string(REGEX REPLACE "^>\\(|[)#]$" "" path "${link}")
  if(NOT EXISTS "${SOURCE_DIR}/${path}")
    list(APPEND problems "README links ${path}, which is not in the repository")
  endif()
endforeach()
string(FIND "${readme}" "../shared/" at)
if(NOT at EQUAL -1)
  list(APPEND problems "README points outside the repository (../shared/)")
endif()

if(problems)
  string(REPLACE ";" "\n- " problems "${problems}")
  message(FATAL_ERROR "README check:\n- ${problems}")
endif()
message(STATUS "README check: passed")
