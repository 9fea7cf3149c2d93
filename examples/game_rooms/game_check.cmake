# The game rooms' CTest runs: game_bots starts game_rooms, plays, and prints
# one JSON object; this script checks what the bots measured.
#
#   cmake -DBOTS=<game_bots> -DSERVER=<game_rooms> -DCASE=<case> -DWORK=<dir>
#         -P game_check.cmake
#
# CASE: smoke, smoke_single_loop, bad_input, room_cap, state_restart, page,
# threads.
cmake_minimum_required(VERSION 3.19) # string(JSON)
foreach(v BOTS SERVER CASE WORK)
  if(NOT DEFINED ${v})
    message(FATAL_ERROR "game_check.cmake needs -D${v}=...")
  endif()
endforeach()
file(REMOVE_RECURSE "${WORK}")
file(MAKE_DIRECTORY "${WORK}")

# Runs game_bots with ARGN; the JSON object it printed goes to `out`.
function(run_bots out)
  execute_process(COMMAND ${BOTS} --json ${ARGN}
    RESULT_VARIABLE rc OUTPUT_VARIABLE o ERROR_VARIABLE e TIMEOUT 120)
  message("$ game_bots --json ${ARGN}\n${o}")
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "game_bots exited with ${rc}:\n${e}")
  endif()
  string(REGEX MATCH "{[^\n]*}" json "${o}")
  if(json STREQUAL "")
    message(FATAL_ERROR "game_bots printed no JSON object:\n${e}")
  endif()
  set(${out} "${json}" PARENT_SCOPE)
endfunction()

# The value at dotted `path` in `json` (true/false as ON/OFF).
function(json_at json path out)
  string(REPLACE "." ";" parts "${path}")
  string(JSON v ERROR_VARIABLE err GET "${json}" ${parts})
  if(err)
    message(FATAL_ERROR "no '${path}' in the report: ${err}")
  endif()
  set(${out} "${v}" PARENT_SCOPE)
endfunction()

# Each ARGN is "path op value" (op ==, >=, >, <); value is a number,
# true/false, or another path. Fails naming every broken one.
function(expect json)
  set(broken "")
  foreach(cond IN LISTS ARGN)
    if(NOT cond MATCHES "^([a-z0-9_.]+) (==|>=|>|<) ([a-z0-9_.]+)$")
      message(FATAL_ERROR "bad condition '${cond}'")
    endif()
    set(lhs_path "${CMAKE_MATCH_1}")
    set(op "${CMAKE_MATCH_2}")
    set(rhs "${CMAKE_MATCH_3}")
    json_at("${json}" "${lhs_path}" lhs)
    if(rhs STREQUAL "true")
      set(rhs ON)
    elseif(rhs STREQUAL "false")
      set(rhs OFF)
    elseif(NOT rhs MATCHES "^[0-9.]+$")
      json_at("${json}" "${rhs}" rhs)
    endif()
    if(op STREQUAL "==")
      if(lhs MATCHES "^(ON|OFF)$")
        if(lhs STREQUAL rhs)
          set(ok 1)
        else()
          set(ok 0)
        endif()
      elseif(lhs EQUAL rhs)
        set(ok 1)
      else()
        set(ok 0)
      endif()
    elseif(op STREQUAL ">=" AND NOT lhs LESS rhs)
      set(ok 1)
    elseif(op STREQUAL ">" AND lhs GREATER rhs)
      set(ok 1)
    elseif(op STREQUAL "<" AND lhs LESS rhs)
      set(ok 1)
    else()
      set(ok 0)
    endif()
    if(NOT ok)
      string(APPEND broken "\n  ${cond}: is ${lhs}")
    endif()
  endforeach()
  if(broken)
    message(FATAL_ERROR "the bots measured what they must not:${broken}")
  endif()
endfunction()

# What every run must show: everyone in, nobody dropped, every snapshot in
# tick order without gaps, no player lost in a portal, a clean stop.
set(clean
  "dropped == 0" "snapshots > 0" "snapshots_lost == 0"
  "snapshots_out_of_order == 0" "transfers_lost == 0" "errors == 0"
  "latency_ms.samples > 0" "server_exit == 0")

set(server ${SERVER} --port 0 --threads 2)
if(CASE STREQUAL "smoke")
  # Eight rooms, bots in six: walkers from room-5 go into room-6, which has
  # no lane yet, then on through room-7 to room-0.
  run_bots(r --bots 60 --rooms 6 --walkers 30 --seconds 3 -- ${server} --rooms 8)
  expect("${r}" ${clean} "joined == bots" "transfers_done > 0"
    "server.transfers >= transfers_done" "server.occupied_retired == 0")
elseif(CASE STREQUAL "smoke_single_loop")
  run_bots(r --bots 60 --rooms 6 --walkers 30 --seconds 3
    -- ${server} --rooms 8 --rooms-on single_loop)
  expect("${r}" ${clean} "joined == bots" "transfers_done > 0")
elseif(CASE STREQUAL "bad_input")
  # A small outbound queue and send buffer, so the client that stops reading
  # fills them within the run; it sits alone in room-3.
  run_bots(r --bots 30 --rooms 3 --seconds 2 --abuse
    -- ${server} --rooms 4 --outbound-kb 32 --sndbuf 8192)
  expect("${r}" ${clean} "joined == bots" "abuse.bad_sent > 0"
    "abuse.bad_answered == abuse.bad_sent" "abuse.usable_after == true"
    "abuse.oversized_closed == true" "abuse.stalled_dropped == true"
    "server.slow_dropped == 1" "server.oversized == 1")
elseif(CASE STREQUAL "room_cap")
  # Four rooms, three may be open: one room's joins are refused, and every
  # bot walks to its portal, so the room before the closed one bounces them.
  run_bots(r --bots 40 --rooms 4 --hot 25 --walkers 100 --seconds 4
    -- ${server} --rooms 4 --max-rooms 3)
  expect("${r}" ${clean} "join_refused > 0" "joined < bots"
    "server.rooms_full > 0" "transfers_refused > 0" "transfers_done > 0")
elseif(CASE STREQUAL "state_restart")
  # Two servers, one after the other, on one RocksDB directory: the second
  # goes on from the ticks and scores the first one left.
  set(args --bots 20 --rooms 2 --walkers 0 --seconds 2
    -- ${server} --rooms 2 --state ${WORK}/state)
  run_bots(first ${args})
  run_bots(second ${args})
  expect("${first}" ${clean})
  expect("${second}" ${clean})
  json_at("${first}" hot_room.last_tick t1)
  json_at("${first}" hot_room.last_scores s1)
  string(JSON second SET "${second}" before_tick "${t1}")
  string(JSON second SET "${second}" before_scores "${s1}")
  expect("${second}" "hot_room.first_tick > before_tick"
    "hot_room.last_scores >= before_scores")
elseif(CASE STREQUAL "threads")
  # Not told how many, the server gives keylane the CPUs it may use less
  # its network threads (at least one worker): pinned to one CPU, one.
  find_program(TASKSET taskset)
  if(NOT TASKSET)
    message("SKIPPED: taskset not found (Debian's util-linux has it)")
    return()
  endif()
  run_bots(pinned --bots 10 --rooms 2 --seconds 1
    -- ${TASKSET} -c 0 ${SERVER} --port 0 --rooms 2)
  expect("${pinned}" ${clean} "joined == bots" "server.keylane_threads == 1"
    "server.io_threads == 1")
  run_bots(told --bots 10 --rooms 2 --seconds 1
    -- ${TASKSET} -c 0 ${SERVER} --port 0 --rooms 2 --threads 3)
  expect("${told}" ${clean} "joined == bots" "server.keylane_threads == 3")
elseif(CASE STREQUAL "page")
  find_program(CHROMIUM NAMES chromium chromium-browser google-chrome)
  if(NOT CHROMIUM)
    message("SKIPPED: chromium not found (install Debian's chromium to run the page test)")
    return()
  endif()
  # The page holds Chromium's dump until its first snapshot is drawn (see
  # page.cpp, hold=1); the bots are in before Chromium starts.
  set(browse "${CHROMIUM} --headless --no-sandbox --disable-gpu --user-data-dir=${WORK}/profile --timeout=10000 --dump-dom '{url}&hold=1'")
  run_bots(r --bots 6 --rooms 1 --walkers 0 --seconds 1 --exec "${browse}"
    --exec-output ${WORK}/dom.html -- ${server} --rooms 1)
  expect("${r}" ${clean} "joined == bots" "exec_status == 0"
    "server.pages_served == 1")
  file(READ ${WORK}/dom.html dom)
  string(REGEX MATCH "id=\"players\">([0-9]+)<" _ "${dom}")
  set(shown "${CMAKE_MATCH_1}")
  string(REGEX MATCH "id=\"tick\">([0-9]+)<" _ "${dom}")
  set(tick "${CMAKE_MATCH_1}")
  message("the page shows ${shown} players at tick ${tick}")
  if(NOT shown EQUAL 7 OR NOT tick GREATER 0 OR NOT dom MATCHES "<li>viewer "
     OR NOT dom MATCHES "<li>bot5 ")
    message(FATAL_ERROR "the page does not show the 6 bots and the viewer:\n${dom}")
  endif()
else()
  message(FATAL_ERROR "unknown CASE '${CASE}'")
endif()
file(REMOVE_RECURSE "${WORK}")
