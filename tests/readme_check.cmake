# README.md as a new user reads it, in ten minutes:
#   - at most 16,384 bytes, its sections in the house order: what it is →
#     why → requirements and status → quick start → a first program →
#     concepts → guarantees → when not to use it → features → settings →
#     the docs → licence;
#   - the ledger's table names its run (commit, the 2-core guests, what
#     builds it), the benchmark's its CPU, build and commit; the requirements
#     name CAF 0.17.6 and the 2 cores;
#   - each guarantee states its exceptions and the test that checks it, and
#     the Kafka state caveat is the true one (a changelog topic across
#     members), not "only for a member that restarts on its own state
#     directory";
#   - the settings say how to print the effective config (--print-config);
#   - what moved out lives on: "Threads keylane starts" in
#     docs/operations.md, "Choosing order, window and cap" in docs/config.md;
#   - every local link in README.md and docs/*.md resolves inside the
#     repository (no ../shared/);
#   - no doc speaks of "the issue", "target N", "this session" or
#     shared/tools, and none is over 40 KB.
#   cmake -DSOURCE_DIR=<repo> -P readme_check.cmake
cmake_minimum_required(VERSION 3.16)
if(NOT SOURCE_DIR)
  message(FATAL_ERROR "readme_check.cmake: pass -DSOURCE_DIR=...")
endif()
file(READ "${SOURCE_DIR}/README.md" readme)
set(problems "")

file(SIZE "${SOURCE_DIR}/README.md" size)
if(size GREATER 16384)
  list(APPEND problems "README.md is ${size} bytes, over 16,384: move detail to docs/")
endif()

# The text of the section headed `title` (up to the next "## ") in `text`.
function(section_of text title out)
  string(FIND "${text}" "\n## ${title}\n" at)
  if(at EQUAL -1)
    set(${out} "" PARENT_SCOPE)
    return()
  endif()
  string(SUBSTRING "${text}" ${at} -1 rest)
  string(SUBSTRING "${rest}" 1 -1 rest)
  string(FIND "${rest}" "\n## " stop)
  string(SUBSTRING "${rest}" 0 ${stop} found)
  set(${out} "${found}" PARENT_SCOPE)
endfunction()

function(require text where)
  foreach(needle IN LISTS ARGN)
    string(FIND "${text}" "${needle}" at)
    if(at EQUAL -1)
      set(problems ${problems} "${where} does not say \"${needle}\"" PARENT_SCOPE)
    endif()
  endforeach()
endfunction()

# The order.
set(order "Why" "Requirements and status" "Quick start" "A first program"
          "Concepts" "Guarantees" "When not to use keylane" "Features"
          "Settings most users touch" "Documentation" "Licence")
set(last -1)
set(last_title "the title")
foreach(title IN LISTS order)
  string(FIND "${readme}" "\n## ${title}\n" at)
  if(at EQUAL -1)
    list(APPEND problems "no \"## ${title}\" section")
  elseif(NOT at GREATER last)
    list(APPEND problems "\"## ${title}\" comes before \"${last_title}\"")
  else()
    set(last ${at})
    set(last_title "## ${title}")
  endif()
endforeach()

section_of("${readme}" "Why" why)
require("${why}" "\"Why\"" "shared queue" "hash partitions")
if(NOT why MATCHES "commit[ \n][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f]")
  list(APPEND problems "\"Why\" does not name the commit the ledger ran")
endif()
require("${why}" "\"Why\"" "2-core" "make run")
section_of("${readme}" "Requirements and status" req)
require("${req}" "\"Requirements and status\"" "0.17.6" "static_assert"
        "Debian 12" "2 cores" "0.x")
section_of("${readme}" "Quick start" quick)
require("${quick}" "\"Quick start\"" "make run" "make test" "find_package(keylane"
        "target_link_libraries")
section_of("${readme}" "Concepts" concepts)
require("${concepts}" "\"Concepts\"" "**Key**" "**Lane**" "**Cap**" "**Window**"
        "**Key backlog**" "**Order**" "**Completion**" "**Tombstone**" "**Park**")

section_of("${readme}" "Guarantees" guarantees)
require("${guarantees}" "\"Guarantees\"" "exactly once, inside this process"
        "kafka.changelog_topic" "`ask`" "`tell`" "order = \"global\"")
string(FIND "${guarantees}" "only for a member that restarts on its own state directory" at)
if(NOT at EQUAL -1)
  list(APPEND problems "the Guarantees still say keyed state is exactly once \"only for a member that restarts on its own state directory\" (a changelog topic makes it so across members)")
endif()
# Every guarantee: its exceptions and its test.
string(REGEX MATCHALL "\n- \\*\\*[^*]+\\*\\*" bullets "${guarantees}")
list(LENGTH bullets n_bullets)
string(REGEX MATCHALL "Exception" exceptions "${guarantees}")
string(REGEX MATCHALL "Checked by" checked "${guarantees}")
list(LENGTH exceptions n_exceptions)
list(LENGTH checked n_checked)
if(n_bullets LESS 6 OR n_exceptions LESS n_bullets OR n_checked LESS n_bullets)
  list(APPEND problems "the Guarantees have ${n_bullets} guarantees, ${n_exceptions} with exceptions and ${n_checked} naming their test: each needs both")
endif()

section_of("${readme}" "When not to use keylane" when_not)
require("${when_not}" "\"When not to use keylane\"" "hash-partitioned"
        "single thread" "hash partitions" "asio strand" "±")
if(NOT when_not MATCHES "(Release|RelWithDebInfo|Debug)")
  list(APPEND problems "\"When not to use keylane\" does not name the build type of its run")
endif()
if(NOT when_not MATCHES "commit[ \n][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f]")
  list(APPEND problems "\"When not to use keylane\" does not name the commit of its run")
endif()
if(NOT when_not MATCHES "(Intel|AMD|Xeon|EPYC|Ryzen|Arm|Graviton|Ampere)")
  list(APPEND problems "\"When not to use keylane\" does not name the CPU of its run")
endif()

section_of("${readme}" "Settings most users touch" settings)
require("${settings}" "\"Settings most users touch\"" "--print-config"
        "runtime.order" "runtime.key_backlog" "retry.max_attempts"
        "differ from the defaults")

# What moved out of the README lives on in the docs.
file(READ "${SOURCE_DIR}/docs/operations.md" operations)
section_of("${operations}" "Threads keylane starts" threads)
require("${threads}" "docs/operations.md \"Threads keylane starts\""
        "worker threads" "clock thread" "consumer thread" "state writer thread"
        "metrics endpoint" "Kafka source" "`scheduler.threads`"
        "`metrics.threads`" "usable_cpus")
file(READ "${SOURCE_DIR}/docs/config.md" config)
section_of("${config}" "Choosing order, window and cap" choosing)
require("${choosing}" "docs/config.md \"Choosing order, window and cap\""
        "runtime.order" "runtime.window" "max_active_keys" "Little's law")

# Local links: [text](path) must exist, relative to the file that has them.
file(GLOB docs RELATIVE "${SOURCE_DIR}" "${SOURCE_DIR}/docs/*.md")
foreach(doc README.md examples/README.md ${docs})
  file(READ "${SOURCE_DIR}/${doc}" text)
  get_filename_component(dir "${SOURCE_DIR}/${doc}" DIRECTORY)
  # Square brackets would nest CMake list elements: take them out first.
  string(REPLACE "[" "<" plain "${text}")
  string(REPLACE "]" ">" plain "${plain}")
  string(REGEX MATCHALL ">\\(([A-Za-z0-9_/.-]+\\.[a-z]+|LICENSE|\\.\\./LICENSE)[)#]" links "${plain}")
  foreach(link IN LISTS links)
    string(REGEX REPLACE "^>\\(|[)#]$" "" path "${link}")
    if(NOT EXISTS "${dir}/${path}")
      list(APPEND problems "${doc} links ${path}, which is not in the repository")
    endif()
  endforeach()
  string(FIND "${text}" "../shared/" at)
  if(NOT at EQUAL -1)
    list(APPEND problems "${doc} points outside the repository (../shared/)")
  endif()
endforeach()

# Docs say what is true now: no lab notebook (issues, targets, sessions, a
# tool outside the repository), and none longer than 40 KB.
foreach(doc README.md ${docs})
  file(READ "${SOURCE_DIR}/${doc}" text)
  string(TOLOWER "${text}" lower)
  foreach(word "the issue" "this session" "shared/tools")
    string(FIND "${lower}" "${word}" at)
    if(NOT at EQUAL -1)
      list(APPEND problems "${doc} speaks of \"${word}\"")
    endif()
  endforeach()
  if(lower MATCHES "target [0-9]")
    list(APPEND problems "${doc} speaks of a numbered target")
  endif()
  file(SIZE "${SOURCE_DIR}/${doc}" doc_size)
  if(doc_size GREATER 40960)
    list(APPEND problems "${doc} is ${doc_size} bytes, over 40 KB")
  endif()
endforeach()

if(problems)
  string(REPLACE ";" "\n- " problems "${problems}")
  message(FATAL_ERROR "README check:\n- ${problems}")
endif()
message(STATUS "README check: passed (${size} bytes)")
