# CTest tests of the keylane-park tool, run against the built binary. Each
# check looks at the exit status *and* the output (PASS_REGULAR_EXPRESSION
# alone would ignore the status), like examples_smoke.cmake.
#
# Included by tests/CMakeLists.txt this file adds the fixture writer and the
# tests; run as `cmake -P` it is the check itself, in one of two forms:
#   -DRC=<status> -DEXPECT=<text> [-DABSENT=<path>] -P park_tool_test.cmake -- <exe> [args...]
#       the command must exit with RC and print EXPECT (literally); ABSENT
#       must not exist afterwards
#   -DTOOL=<keylane-park> -DFIXTURE=<park_fixture> -DWORK=<dir> -P park_tool_test.cmake
#       the end-to-end scenario below, on a store written by park_fixture

if(CMAKE_SCRIPT_MODE_FILE)
  # Runs ARGN; fails unless it exits with `rc` and prints every text of the
  # list variable `texts_var`. Leaves the output in `park_out`.
  function(park_expect rc texts_var)
    execute_process(COMMAND ${ARGN} RESULT_VARIABLE got
      OUTPUT_VARIABLE out ERROR_VARIABLE out)
    list(JOIN ARGN " " shown)
    message("$ ${shown}\n${out}")
    if(NOT got STREQUAL "${rc}")
      message(FATAL_ERROR "'${shown}' exited with ${got}, expected ${rc}")
    endif()
    foreach(text IN LISTS ${texts_var})
      string(FIND "${out}" "${text}" at)
      if(at EQUAL -1)
        message(FATAL_ERROR "'${shown}' did not print: ${text}")
      endif()
    endforeach()
    set(park_out "${out}" PARENT_SCOPE)
  endfunction()

  if(SCENARIO STREQUAL "headers")
    # The installed headers (the folders HEADERS and MORE_HEADERS) name no
    # SQLite header: the library links SQLite privately.
    # HEADERS is runtime/, whose subsystem folders each install include/.
    file(GLOB header_dirs LIST_DIRECTORIES true "${HEADERS}/*/include")
    list(LENGTH header_dirs n_dirs)
    if(n_dirs LESS 2)
      message(FATAL_ERROR "no subsystem include folders under ${HEADERS}")
    endif()
    foreach(dir IN LISTS header_dirs MORE_HEADERS)
      file(GLOB_RECURSE files "${dir}/*.hpp" "${dir}/*.h")
      foreach(f IN LISTS files)
        file(STRINGS "${f}" hits REGEX "#[ \t]*include[ \t]*[<\"]sqlite3")
        if(hits)
          message(FATAL_ERROR "${f} is installed and includes SQLite: ${hits}")
        endif()
      endforeach()
    endforeach()
    return()
  endif()

  if(SCENARIO STREQUAL "readonly")
    # list, show and export open the store read-only: they work on a file
    # and directory this user cannot write (run as nobody when we are root,
    # who ignores permissions), change no byte or mtime, create no -wal or
    # -shm, and refuse an empty file instead of making it a store.
    if(EXISTS "${WORK}")
      execute_process(COMMAND chmod -R u+w "${WORK}")
    endif()
    file(REMOVE_RECURSE "${WORK}")
    set(dir "${WORK}/ro")
    file(MAKE_DIRECTORY "${dir}")
    set(store "${dir}/park.db")
    set(empty "${dir}/empty.db")
    set(none "")
    park_expect(0 none "${FIXTURE}" "${store}")
    file(WRITE "${empty}" "")
    execute_process(COMMAND chmod 0444 "${store}" "${empty}")
    execute_process(COMMAND chmod 0555 "${dir}")
    execute_process(COMMAND id -u OUTPUT_VARIABLE uid
      OUTPUT_STRIP_TRAILING_WHITESPACE)
    set(users "self")
    find_program(SETPRIV setpriv)
    if(uid STREQUAL "0" AND SETPRIV)
      list(APPEND users "nobody")
    endif()
    function(file_state path out)
      file(SHA256 "${path}" hash)
      execute_process(COMMAND stat -c "%y %s" "${path}" OUTPUT_VARIABLE st)
      set(${out} "${hash} ${st}" PARENT_SCOPE)
    endfunction()
    file_state("${store}" store_before)
    file_state("${empty}" empty_before)
    foreach(user IN LISTS users)
      set(as "")
      if(user STREQUAL "nobody")
        set(as "${SETPRIV}" --reuid=65534 --regid=65534 --clear-groups)
      endif()
      message("-- as ${user}")
      set(texts "2 keys, 3 records")
      park_expect(0 texts ${as} "${TOOL}" list "${store}")
      set(texts "integer key 7: 1 parked record")
      park_expect(0 texts ${as} "${TOOL}" show "${store}" 7 --int-key)
      set(texts [=["id":3,"seq":12,"key":"7","key_kind":"integer"]=])
      park_expect(0 texts ${as} "${TOOL}" export "${store}")
      set(texts "${empty}" "not a keylane park store: the file is empty")
      park_expect(1 texts ${as} "${TOOL}" list "${empty}")
      park_expect(1 texts ${as} "${TOOL}" export "${empty}")
      park_expect(1 texts ${as} "${TOOL}" discard "${empty}" k)
    endforeach()
    file_state("${store}" store_after)
    file_state("${empty}" empty_after)
    execute_process(COMMAND chmod -R u+w "${WORK}")
    if(NOT store_after STREQUAL store_before)
      message(FATAL_ERROR "the store changed: ${store_before} -> ${store_after}")
    endif()
    if(NOT empty_after STREQUAL empty_before)
      message(FATAL_ERROR "the empty file changed: ${empty_before} -> ${empty_after}")
    endif()
    foreach(side "${store}-wal" "${store}-shm" "${empty}-wal" "${empty}-shm"
                 "${empty}-journal")
      if(EXISTS "${side}")
        message(FATAL_ERROR "an inspection created ${side}")
      endif()
    endforeach()
    return()
  endif()

  if(NOT TOOL) # the first form
    include("${CMAKE_CURRENT_LIST_DIR}/script_args.cmake")
    keylane_command_after_dashes(cmd)
    set(texts "${EXPECT}")
    park_expect("${RC}" texts ${cmd})
    if(ABSENT AND EXISTS "${ABSENT}")
      message(FATAL_ERROR "'${cmd}' created ${ABSENT}")
    endif()
    return()
  endif()

  # The end-to-end scenario. The fixture's string key is: acct "q"\<TAB><0x01>
  file(REMOVE_RECURSE "${WORK}")
  file(MAKE_DIRECTORY "${WORK}")
  set(store "${WORK}/park.db")
  set(none "")
  park_expect(0 none "${FIXTURE}" "${store}")

  set(texts
    "KEY               KIND     COUNT  FIRST PARKED AT           FIRST REASON"
    [=[acct "q"\\\t\x01  string       2  2024-05-01T12:00:00.123Z  handler threw: "bad"\namount]=]
    "7                 integer      1  2024-05-01T12:01:00.123Z  timeout"
    "2 keys, 3 records")
  park_expect(0 texts "${TOOL}" list "${store}")

  set(texts
    [=[{"id":1,"seq":10,"key":"acct \"q\"\\\t\u0001","key_kind":"string","reason":"handler threw: \"bad\"\namount","attempts":3,"parked_at":"2024-05-01T12:00:00.123456789Z","payload_base64":"AAH/aGk="}]=]
    [=[{"id":2,"seq":11,"key":"acct \"q\"\\\t\u0001","key_kind":"string","reason":"key parked","attempts":0,"parked_at":"2024-05-01T12:00:01.123456789Z","payload_base64":"QUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQQ=="}]=]
    [=[{"id":3,"seq":12,"key":"7","key_kind":"integer","reason":"timeout","attempts":5,"parked_at":"2024-05-01T12:01:00.123456789Z","payload_base64":"c2V2ZW4="}]=])
  park_expect(0 texts "${TOOL}" export "${store}")
  string(REGEX MATCHALL "\n" lines "${park_out}")
  list(LENGTH lines n)
  if(NOT n EQUAL 3)
    message(FATAL_ERROR "export printed ${n} lines, expected 3")
  endif()
  if(CMAKE_VERSION VERSION_GREATER_EQUAL 3.19) # string(JSON): a real parser
    string(REGEX REPLACE "\n.*" "" first "${park_out}")
    string(JSON key GET "${first}" key)
    string(ASCII 1 soh)
    if(NOT key STREQUAL "acct \"q\"\\\t${soh}")
      message(FATAL_ERROR "export: the key decodes to '${key}'")
    endif()
  endif()

  set(texts "integer key 7: 1 parked record" "736576656e" "timeout")
  park_expect(0 texts "${TOOL}" show "${store}" 7 --int-key)
  set(texts "string key \"7\": no parked records")
  park_expect(0 texts "${TOOL}" show "${store}" 7)
  set(texts [=["id":3,"seq":12,"key":"7","key_kind":"integer"]=])
  park_expect(0 texts "${TOOL}" export --int-key "${store}" 7)
  string(FIND "${park_out}" "acct" at)
  if(NOT at EQUAL -1)
    message(FATAL_ERROR "export of key 7 printed another key")
  endif()

  set(texts "discarded 1 record of integer key 7 from ${store}")
  park_expect(0 texts "${TOOL}" discard "${store}" --int-key 7)
  set(texts "1 key, 2 records")
  park_expect(0 texts "${TOOL}" list "${store}")

  # The store named by a runtime's config file, or by --set.
  file(WRITE "${WORK}/app.toml" "[park]\nstore = \"sqlite\"\npath = \"${store}\"\n")
  set(texts "1 key, 2 records")
  park_expect(0 texts "${TOOL}" list --config "${WORK}/app.toml")
  park_expect(0 texts "${TOOL}" list "--set=park.path=${store}")
  set(texts "string key \"7\": no parked records in ${store}")
  park_expect(0 texts "${TOOL}" show 7 --config "${WORK}/app.toml")
  set(texts "app.toml + --set: park.store = \"memory\": keylane-park reads only a \"sqlite\" park store")
  park_expect(1 texts "${TOOL}" list --config "${WORK}/app.toml" --set park.store=memory)
  set(texts "'list' takes no argument with --config or --set (FILE comes from the config); unexpected '${store}'")
  park_expect(2 texts "${TOOL}" list "${store}" --config "${WORK}/app.toml")
  file(WRITE "${WORK}/memory.toml" "[park]\nstore = \"memory\"\n")
  set(texts "memory.toml: park.store = \"memory\": keylane-park reads only")
  park_expect(1 texts "${TOOL}" list --config "${WORK}/memory.toml")
  set(texts "park.windw=1: unknown key park.windw")
  park_expect(2 texts "${TOOL}" list --set park.windw=1)

  file(WRITE "${WORK}/notes.txt" "not a park store\n")
  set(texts "${WORK}/notes.txt" "not an SQLite database")
  park_expect(1 texts "${TOOL}" list "${WORK}/notes.txt")
  set(texts "--int-key: KEY 'x7' is not an unsigned 64-bit decimal integer")
  park_expect(2 texts "${TOOL}" show "${store}" --int-key x7)
  return()
endif()

# Test names with spaces need policy CMP0110 (CMake 3.19); see
# examples_smoke.cmake for why it is deferred to the directory's end.
if(POLICY CMP0110)
  cmake_language(DEFER CALL cmake_policy SET CMP0110 NEW)
endif()

add_executable(park_fixture park_fixture.cpp)
target_link_libraries(park_fixture PRIVATE keylane::keylane keylane_flags)

set(park_tool_script "${CMAKE_CURRENT_LIST_FILE}")
set(park_tool_work "${CMAKE_CURRENT_BINARY_DIR}/park_tool_test")

# Adds "park tool: <name>": `keylane-park ARGN` must exit with `rc` and
# print `expect`.
function(keylane_park_tool_test name rc expect)
  add_test(NAME "park tool: ${name}"
    COMMAND ${CMAKE_COMMAND} "-DRC=${rc}" "-DEXPECT=${expect}"
      "-DABSENT=${park_tool_work}/missing.park"
      -P "${park_tool_script}" -- $<TARGET_FILE:keylane-park> ${ARGN})
  set_tests_properties("park tool: ${name}" PROPERTIES LABELS "park" TIMEOUT 60)
endfunction()

keylane_park_tool_test("--help exits 0" 0 "usage: keylane-park" --help)
keylane_park_tool_test("list of a missing file exits 1 naming it, creating nothing"
  1 "${park_tool_work}/missing.park: no such file"
  list "${park_tool_work}/missing.park")
keylane_park_tool_test("an unknown command exits 2" 2 "unknown command 'frobnicate'"
  frobnicate "${park_tool_work}/missing.park")
keylane_park_tool_test("show without KEY exits 2" 2 "'show' needs FILE and KEY"
  show "${park_tool_work}/missing.park")

add_test(NAME "park tool: list, show, export and discard a fixture store"
  COMMAND ${CMAKE_COMMAND} -DTOOL=$<TARGET_FILE:keylane-park>
    -DFIXTURE=$<TARGET_FILE:park_fixture> "-DWORK=${park_tool_work}/end_to_end"
    -P "${park_tool_script}")
set_tests_properties("park tool: list, show, export and discard a fixture store"
  PROPERTIES LABELS "park" TIMEOUT 120)

add_test(NAME "park tool: list, show and export read a read-only store and change no file"
  COMMAND ${CMAKE_COMMAND} -DSCENARIO=readonly -DTOOL=$<TARGET_FILE:keylane-park>
    -DFIXTURE=$<TARGET_FILE:park_fixture> "-DWORK=${park_tool_work}/readonly"
    -P "${park_tool_script}")
set_tests_properties("park tool: list, show and export read a read-only store and change no file"
  PROPERTIES LABELS "park" TIMEOUT 120)

add_test(NAME "park tool: no installed header includes sqlite3.h"
  COMMAND ${CMAKE_COMMAND} -DSCENARIO=headers
    "-DHEADERS=${PROJECT_SOURCE_DIR}/runtime" "-DMORE_HEADERS=${PROJECT_SOURCE_DIR}/actors/include"
    -P "${park_tool_script}")
set_tests_properties("park tool: no installed header includes sqlite3.h"
  PROPERTIES LABELS "park" TIMEOUT 60)
