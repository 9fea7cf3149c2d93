# CTest tests of the keylane-state tool, run against the built binary. Each
# check looks at the exit status *and* the output, like park_tool_test.cmake.
#
# Included by tests/CMakeLists.txt this file adds the fixture writer and the
# tests; run as `cmake -P` it is the check itself, in one of these forms:
#   -DRC=<status> -DEXPECT=<text> [-DABSENT=<path>] -P state_tool_test.cmake -- <exe> [args...]
#       the command must exit with RC and print EXPECT (literally); ABSENT
#       must not exist afterwards
#   -DSCENARIO=<name> -DTOOL=<keylane-state> -DFIXTURE=<state_fixture> -DWORK=<dir> -P state_tool_test.cmake
#       one of the scenarios below, on stores written by state_fixture

if(CMAKE_SCRIPT_MODE_FILE)
  # Runs ARGN; fails unless it exits with `rc` and prints (on standard
  # output or error) every text of the list variable `texts_var`. Leaves
  # standard output in `state_out` and standard error in `state_err`.
  function(state_expect rc texts_var)
    execute_process(COMMAND ${ARGN} RESULT_VARIABLE got
      OUTPUT_VARIABLE out ERROR_VARIABLE err)
    list(JOIN ARGN " " shown)
    message("$ ${shown}\n${out}${err}")
    if(NOT got STREQUAL "${rc}")
      message(FATAL_ERROR "'${shown}' exited with ${got}, expected ${rc}")
    endif()
    foreach(text IN LISTS ${texts_var})
      string(FIND "${out}${err}" "${text}" at)
      if(at EQUAL -1)
        message(FATAL_ERROR "'${shown}' did not print: ${text}")
      endif()
    endforeach()
    set(state_out "${out}" PARENT_SCOPE)
    set(state_err "${err}" PARENT_SCOPE)
  endfunction()

  # Fails unless `text` occurs in `where` (`yes`) or does not (`no`).
  function(state_find where text yes)
    string(FIND "${where}" "${text}" at)
    if(yes AND at EQUAL -1)
      message(FATAL_ERROR "expected '${text}' in:\n${where}")
    elseif(NOT yes AND NOT at EQUAL -1)
      message(FATAL_ERROR "did not expect '${text}' in:\n${where}")
    endif()
  endfunction()

  # Fails unless `text` has `n` lines.
  function(state_lines text n)
    string(REGEX MATCHALL "\n" lines "${text}")
    list(LENGTH lines got)
    if(NOT got EQUAL n)
      message(FATAL_ERROR "expected ${n} lines, got ${got}:\n${text}")
    endif()
  endfunction()

  if(SCENARIO STREQUAL "headers")
    # The installed headers name no RocksDB header: the library links
    # RocksDB privately.
    # HEADERS is runtime/, whose subsystem folders each install include/.
    file(GLOB header_dirs LIST_DIRECTORIES true "${HEADERS}/*/include")
    list(LENGTH header_dirs n_dirs)
    if(n_dirs LESS 2)
      message(FATAL_ERROR "no subsystem include folders under ${HEADERS}")
    endif()
    foreach(dir IN LISTS header_dirs MORE_HEADERS)
      file(GLOB_RECURSE files "${dir}/*.hpp" "${dir}/*.h")
      foreach(f IN LISTS files)
        file(STRINGS "${f}" hits REGEX "#[ \t]*include[ \t]*[<\"]rocksdb/")
        if(hits)
          message(FATAL_ERROR "${f} is installed and includes RocksDB: ${hits}")
        endif()
      endforeach()
    endforeach()
    return()
  endif()

  if(NOT SCENARIO) # the first form
    include("${CMAKE_CURRENT_LIST_DIR}/script_args.cmake")
    keylane_command_after_dashes(cmd)
    set(texts "${EXPECT}")
    state_expect("${RC}" texts ${cmd})
    if(ABSENT AND EXISTS "${ABSENT}")
      message(FATAL_ERROR "'${cmd}' created ${ABSENT}")
    endif()
    return()
  endif()

  if(EXISTS "${WORK}")
    execute_process(COMMAND chmod -R u+w "${WORK}")
  endif()
  file(REMOVE_RECURSE "${WORK}")
  file(MAKE_DIRECTORY "${WORK}")
  set(store "${WORK}/state")
  set(none "")

  if(SCENARIO STREQUAL "end_to_end")
    # The fixture's odd string key is: acct "q"\<TAB><0x01>
    state_expect(0 none "${FIXTURE}" "${store}")

    set(texts
      "KEY               KIND     EVENTS  TAKEN AT                  STATE BYTES"
      "7                 integer       3  2024-05-01T12:00:00.123Z           12"
      "42                integer    1041  2024-05-01T12:01:00.123Z           12"
      "7                 string        1  2024-05-01T12:00:01.123Z           21"
      [=[acct "q"\\\t\x01  string        2  2024-05-01T12:00:02.123Z           12]=]
      "4 keys")
    state_expect(0 texts "${TOOL}" list "${store}")
    state_lines("${state_out}" 6)

    set(line_7 [=[{"key":"7","key_kind":"integer","events":3,"origins":{},"taken_at":"2024-05-01T12:00:00.123Z","state_bytes":12,"state_base64":"A2FubgAAAAAAAATi"}]=])
    set(line_42 [=[{"key":"42","key_kind":"integer","events":1041,"origins":{"payments/0":1040,"payments/3":17},"taken_at":"2024-05-01T12:01:00.123Z","state_bytes":12,"state_base64":"A2JvYv/////////7"}]=])
    set(line_s7 [=[{"key":"7","key_kind":"string","events":1,"origins":{},"taken_at":"2024-05-01T12:00:01.123Z","state_bytes":21,"state_base64":"DHN0cmluZyBzZXZlbgAAAAAAAAAA"}]=])
    set(line_odd [=[{"key":"acct \"q\"\\\t\u0001","key_kind":"string","events":2,"origins":{},"taken_at":"2024-05-01T12:00:02.123Z","state_bytes":12,"state_base64":"A29kZAAAAAAAAABj"}]=])
    set(texts "${line_7}\n${line_42}\n${line_s7}\n${line_odd}\n")
    state_expect(0 texts "${TOOL}" export "${store}")
    state_lines("${state_out}" 4)
    if(CMAKE_VERSION VERSION_GREATER_EQUAL 3.19) # string(JSON): a real parser
      string(REGEX REPLACE "^[^\n]*\n[^\n]*\n[^\n]*\n" "" last "${state_out}")
      string(JSON k GET "${last}" key)
      string(ASCII 1 soh)
      if(NOT k STREQUAL "acct \"q\"\\\t${soh}")
        message(FATAL_ERROR "export: the key decodes to '${k}'")
      endif()
    endif()

    set(texts "${line_42}\n")
    state_expect(0 texts "${TOOL}" show "${store}" 42 --int-key)
    state_lines("${state_out}" 1)
    set(texts "${line_s7}\n")
    state_expect(0 texts "${TOOL}" show "${store}" 7)
    set(texts "string key \"42\": no state in ${store}")
    state_expect(0 texts "${TOOL}" show "${store}" 42)
    set(texts "${line_7}\n")
    state_expect(0 texts "${TOOL}" export --int-key "${store}" 7)
    state_lines("${state_out}" 1)

    # An application's own tool, with a renderer for its state type.
    set(texts [=["state_base64":"A2JvYv/////////7","state":{   "owner": "bob",   "cents": -5 }}]=])
    state_expect(0 texts "${FIXTURE}" tool show "${store}" --int-key 42)
    state_lines("${state_out}" 1)
    if(CMAKE_VERSION VERSION_GREATER_EQUAL 3.19)
      string(JSON owner GET "${state_out}" state owner)
      string(JSON p3 GET "${state_out}" origins payments/3)
      if(NOT owner STREQUAL "bob" OR NOT p3 STREQUAL "17")
        message(FATAL_ERROR "show: state.owner '${owner}', origins payments/3 '${p3}'")
      endif()
    endif()
    set(texts [=["state":{   "owner": "odd",   "cents": 99 }}]=])
    state_expect(0 texts "${FIXTURE}" tool export "${store}")
    state_lines("${state_out}" 4)
    set(texts "usage: account-state COMMAND DIR")
    state_expect(0 texts "${FIXTURE}" tool --help)

    set(texts "erased the state of integer key 7 from ${store}")
    state_expect(0 texts "${TOOL}" erase "${store}" --int-key 7)
    set(texts "integer key 7: no state in ${store}; nothing erased")
    state_expect(0 texts "${TOOL}" erase "${store}" --int-key 7)
    set(texts "3 keys")
    state_expect(0 texts "${TOOL}" list "${store}")
    state_find("${state_out}" "integer       3" no)
    set(texts "${line_s7}")
    state_expect(0 texts "${TOOL}" show "${store}" 7)

    # The store named by a runtime's config file, or by --set.
    file(WRITE "${WORK}/app.toml" "[state]\nstore = \"rocksdb\"\npath = \"${store}\"\n")
    set(texts "3 keys")
    state_expect(0 texts "${TOOL}" list --config "${WORK}/app.toml")
    state_expect(0 texts "${TOOL}" list "--set=state.path=${store}")
    set(texts "${line_42}")
    state_expect(0 texts "${TOOL}" show --int-key 42 --config "${WORK}/app.toml")
    set(texts "app.toml + --set: state.store = \"memory\": keylane-state reads only a \"rocksdb\" state store")
    state_expect(1 texts "${TOOL}" list --config "${WORK}/app.toml" --set state.store=memory)
    set(texts "'list' takes no argument with --config or --set (DIR comes from the config); unexpected '${store}'")
    state_expect(2 texts "${TOOL}" list "${store}" --config "${WORK}/app.toml")
    file(WRITE "${WORK}/none.toml" "[runtime]\nwindow = 64\n")
    set(texts "none.toml: state.store = \"none\": keylane-state reads only")
    state_expect(1 texts "${TOOL}" list --config "${WORK}/none.toml")
    set(texts "state.windw=1: unknown key state.windw")
    state_expect(2 texts "${TOOL}" list --set state.windw=1)

    # Paths that are no state store: refused, left as they were.
    file(WRITE "${WORK}/notes/readme.txt" "not a state store\n")
    set(texts "${WORK}/notes: not a keylane state store: a directory that is not empty and holds no RocksDB database")
    state_expect(1 texts "${TOOL}" list "${WORK}/notes")
    state_expect(1 texts "${TOOL}" erase "${WORK}/notes" k)
    file(MAKE_DIRECTORY "${WORK}/empty")
    set(texts "${WORK}/empty: not a keylane state store: the directory is empty")
    state_expect(1 texts "${TOOL}" list "${WORK}/empty")
    state_expect(1 texts "${TOOL}" erase "${WORK}/empty" k)
    file(GLOB left "${WORK}/empty/*")
    if(left)
      message(FATAL_ERROR "erase created files in an empty directory: ${left}")
    endif()
    set(texts "${WORK}/missing: no such directory")
    state_expect(1 texts "${TOOL}" erase "${WORK}/missing" k)
    if(EXISTS "${WORK}/missing")
      message(FATAL_ERROR "erase created ${WORK}/missing")
    endif()
    set(texts "${store}/CURRENT: not a directory")
    state_expect(1 texts "${TOOL}" list "${store}/CURRENT")
    return()
  endif()

  if(SCENARIO STREQUAL "corrupt")
    # The string key "broken" holds raw garbage, written through the store.
    state_expect(0 none "${FIXTURE}" "${store}" --corrupt)
    set(broken [=[string key "broken": state_store_failed: not a valid keylane state record: bad magic: starts with 67617262, expected 4b4c5354 ("KLST")]=])

    set(texts "keylane-state: ${broken}; erase resets the key")
    state_expect(1 texts "${TOOL}" show "${store}" broken)
    if(NOT state_out STREQUAL "")
      message(FATAL_ERROR "show of a damaged record printed: ${state_out}")
    endif()

    # list still lists the others, and names the damaged one.
    set(texts
      "42                integer    1041  2024-05-01T12:01:00.123Z           12"
      "5 keys, and 1 damaged"
      "keylane-state: ${broken}"
      "keylane-state: 1 of the 6 records in ${store} is damaged (named above)")
    state_expect(1 texts "${TOOL}" list "${store}")
    state_lines("${state_out}" 7)
    state_find("${state_out}" "broken" no)
    state_find("${state_err}" "${broken}" yes)

    set(texts "keylane-state: ${broken}"
      "of the 6 records in ${store}, 1 damaged (not exported)")
    state_expect(1 texts "${TOOL}" export "${store}")
    state_lines("${state_out}" 5)
    state_find("${state_out}" "broken" no)

    # A sound record whose state the application's renderer cannot decode:
    # printed with "state_error" instead of "state", and exit status 1.
    set(texts [=["key":"bad state","key_kind":"string","events":5]=]
      [=["state_base64":"fw==","state_error":"codec_failed: cannot decode payload]=]
      "account-state: string key \"bad state\": cannot render the state: codec_failed")
    state_expect(1 texts "${FIXTURE}" tool show "${store}" "bad state")
    state_lines("${state_out}" 1)
    set(texts "account-state: ${broken}"
      "account-state: string key \"bad state\": cannot render the state"
      "account-state: of the 6 records in ${store}, 1 damaged (not exported), 1 whose state could not be rendered")
    state_expect(1 texts "${FIXTURE}" tool export "${store}")
    state_lines("${state_out}" 5)

    set(texts [=["key":"42","key_kind":"integer","events":1041]=])
    state_expect(0 texts "${TOOL}" show "${store}" 42 --int-key)
    set(texts "erased the state of string key \"broken\"")
    state_expect(0 texts "${TOOL}" erase "${store}" broken)
    set(texts "5 keys\n")
    state_expect(0 texts "${TOOL}" list "${store}")
    return()
  endif()

  if(SCENARIO STREQUAL "damaged_log")
    # One byte flipped in the middle of the write-ahead log: every command
    # refuses the store, naming the file and the way forward, and changes
    # no file; with state.recover = "point_in_time" list reads it as of
    # the damage, says so, and still changes no file.
    state_expect(0 none "${FIXTURE}" "${store}" --damage-log)
    string(REGEX MATCH "of ([^\n]*\\.log)\n" _ "${state_out}")
    set(log "${CMAKE_MATCH_1}")
    if(NOT log)
      message(FATAL_ERROR "the fixture named no log: ${state_out}")
    endif()
    file(GLOB files "${store}/*")
    set(before "")
    foreach(f IN LISTS files)
      file(SHA256 "${f}" hash)
      string(APPEND before "${f} ${hash}\n")
    endforeach()
    set(texts "keylane-state: state_store_failed: state store ${store}: the write-ahead log ${log} is damaged (Corruption: "
      "nothing in it was changed"
      "state.recover = \"point_in_time\"")
    state_expect(1 texts "${TOOL}" list "${store}")
    if(NOT state_out STREQUAL "")
      message(FATAL_ERROR "list of a damaged store printed: ${state_out}")
    endif()
    state_expect(1 texts "${TOOL}" show "${store}" 7)
    state_expect(1 texts "${TOOL}" export "${store}")
    state_expect(1 texts "${TOOL}" erase "${store}" 7)
    set(texts "keylane-state: state store ${store}: point-in-time recovery (state.recover = \"point_in_time\"): the write-ahead log ${log} is damaged"
      "read-only: nothing on disk changed"
      "7    integer       3  2024-05-01T12:00:00.123Z           12\n1 key\n")
    state_expect(0 texts "${TOOL}" list "--set=state.path=${store}"
      --set state.recover=point_in_time)
    file(GLOB files "${store}/*")
    set(after "")
    foreach(f IN LISTS files)
      file(SHA256 "${f}" hash)
      string(APPEND after "${f} ${hash}\n")
    endforeach()
    if(NOT after STREQUAL before)
      message(FATAL_ERROR "the store changed:\n${before}\n->\n${after}")
    endif()
    return()
  endif()

  if(SCENARIO STREQUAL "readonly")
    # list, show and export open the store read-only: they work in a
    # directory this user cannot write (run as nobody when we are root, who
    # ignores permissions) and change no file, not even RocksDB's LOG.
    state_expect(0 none "${FIXTURE}" "${store}")
    function(tree_state out)
      file(GLOB_RECURSE files LIST_DIRECTORIES true "${store}/*")
      list(SORT files)
      set(st "")
      foreach(f IN LISTS files)
        execute_process(COMMAND stat -c "%n %y %s" "${f}" OUTPUT_VARIABLE s)
        if(NOT IS_DIRECTORY "${f}")
          file(SHA256 "${f}" hash)
          string(APPEND s "${hash}\n")
        endif()
        string(APPEND st "${s}")
      endforeach()
      set(${out} "${st}" PARENT_SCOPE)
    endfunction()
    tree_state(before)
    execute_process(COMMAND chmod -R a-w "${store}")
    execute_process(COMMAND id -u OUTPUT_VARIABLE uid
      OUTPUT_STRIP_TRAILING_WHITESPACE)
    set(users "self")
    find_program(SETPRIV setpriv)
    if(uid STREQUAL "0" AND SETPRIV)
      list(APPEND users "nobody")
    endif()
    foreach(user IN LISTS users)
      set(as "")
      if(user STREQUAL "nobody")
        set(as "${SETPRIV}" --reuid=65534 --regid=65534 --clear-groups)
      endif()
      message("-- as ${user}")
      set(texts "4 keys")
      state_expect(0 texts ${as} "${TOOL}" list "${store}")
      set(texts [=["key":"42","key_kind":"integer","events":1041]=])
      state_expect(0 texts ${as} "${TOOL}" show "${store}" 42 --int-key)
      state_expect(0 texts ${as} "${TOOL}" export "${store}")
      if(user STREQUAL "nobody")
        set(texts "${store}: cannot open: IO error")
        state_expect(1 texts ${as} "${TOOL}" erase "${store}" 7)
      endif()
    endforeach()
    execute_process(COMMAND chmod -R u+w "${store}")
    tree_state(after)
    if(NOT after STREQUAL before)
      message(FATAL_ERROR "the store changed:\n${before}\n->\n${after}")
    endif()
    return()
  endif()

  message(FATAL_ERROR "state_tool_test.cmake: unknown SCENARIO '${SCENARIO}'")
endif()

# Test names with spaces need policy CMP0110 (CMake 3.19); see
# examples_smoke.cmake for why it is deferred to the directory's end.
if(POLICY CMP0110)
  cmake_language(DEFER CALL cmake_policy SET CMP0110 NEW)
endif()

add_executable(state_fixture state_fixture.cpp)
target_link_libraries(state_fixture PRIVATE keylane::keylane keylane_flags)

set(state_tool_script "${CMAKE_CURRENT_LIST_FILE}")
set(state_tool_work "${CMAKE_CURRENT_BINARY_DIR}/state_tool_test")

# Adds "state tool: <name>": `keylane-state ARGN` must exit with `rc` and
# print `expect`.
function(keylane_state_tool_test name rc expect)
  add_test(NAME "state tool: ${name}"
    COMMAND ${CMAKE_COMMAND} "-DRC=${rc}" "-DEXPECT=${expect}"
      "-DABSENT=${state_tool_work}/missing"
      -P "${state_tool_script}" -- $<TARGET_FILE:keylane-state> ${ARGN})
  set_tests_properties("state tool: ${name}" PROPERTIES LABELS "state" TIMEOUT 60)
endfunction()

keylane_state_tool_test("--help exits 0" 0 "usage: keylane-state COMMAND DIR" --help)
keylane_state_tool_test("list of a missing directory exits 1 naming it, creating nothing"
  1 "${state_tool_work}/missing: no such directory"
  list "${state_tool_work}/missing")
keylane_state_tool_test("an unknown command exits 2" 2 "unknown command 'frobnicate'"
  frobnicate "${state_tool_work}/missing")
keylane_state_tool_test("show without KEY exits 2" 2 "'show' needs DIR and KEY"
  show "${state_tool_work}/missing")
keylane_state_tool_test("an --int-key that is no integer exits 2" 2
  "--int-key: KEY 'x7' is not an unsigned 64-bit decimal integer"
  show "${state_tool_work}/missing" --int-key x7)

# Adds "state tool: <name>" running SCENARIO on its own work directory.
function(keylane_state_tool_scenario name scenario)
  add_test(NAME "state tool: ${name}"
    COMMAND ${CMAKE_COMMAND} -DSCENARIO=${scenario}
      -DTOOL=$<TARGET_FILE:keylane-state> -DFIXTURE=$<TARGET_FILE:state_fixture>
      "-DWORK=${state_tool_work}/${scenario}" -P "${state_tool_script}")
  set_tests_properties("state tool: ${name}" PROPERTIES LABELS "state" TIMEOUT 120)
endfunction()

keylane_state_tool_scenario("list, show, export and erase a fixture store" end_to_end)
keylane_state_tool_scenario("a damaged record fails show and is named by list and export, which go on"
  corrupt)
keylane_state_tool_scenario("list, show and export read a read-only store and change no file"
  readonly)
keylane_state_tool_scenario("a damaged write-ahead log fails every command, naming the file, and changes no file"
  damaged_log)

add_test(NAME "state tool: no installed header includes a RocksDB header"
  COMMAND ${CMAKE_COMMAND} -DSCENARIO=headers
    "-DHEADERS=${PROJECT_SOURCE_DIR}/runtime" "-DMORE_HEADERS=${PROJECT_SOURCE_DIR}/actors/include"
    -P "${state_tool_script}")
set_tests_properties("state tool: no installed header includes a RocksDB header"
  PROPERTIES LABELS "state" TIMEOUT 60)
