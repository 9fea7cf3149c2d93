# The folders' one include direction.
# 1. runtime/ includes nothing of actors/: the runtime is the lower layer, and
#    the actors build on it, never the other way round.
# 2. runtime/'s subsystem folders come in one order (SUBSYSTEMS, lowest
#    first, the list CMakeLists.txt builds from): a file includes keylane
#    headers only from its own folder or from folders before it, so no two
#    subsystems lean on each other and none reaches up into the engine that
#    assembles them. A folder under runtime/ that is not in the list fails,
#    so a new subsystem has to take its place in the order.
# 3. A private header (src/, included by a bare name) is its own folder's.
# 4. <keylane/runtime.hpp>, which every program includes, does not bring in
#    the queue and hash-table libraries of the event path (moodycamel's
#    concurrentqueue, tsl::robin_map): followed through every keylane header
#    it includes, none of them names one.
# Usage: cmake -DSOURCE_DIR=<repo> -DSUBSYSTEMS=a,b,... -P include_direction.cmake
string(REPLACE "," ";" order "${SUBSYSTEMS}")
list(LENGTH order n_subsystems)
if(n_subsystems LESS 2)
  message(FATAL_ERROR "SUBSYSTEMS names no order: '${SUBSYSTEMS}'")
endif()

file(GLOB_RECURSE actor_headers RELATIVE "${SOURCE_DIR}/actors/include"
     "${SOURCE_DIR}/actors/include/*.hpp")
if(NOT actor_headers)
  message(FATAL_ERROR "no headers found under ${SOURCE_DIR}/actors/include")
endif()

file(GLOB folders LIST_DIRECTORIES true RELATIVE "${SOURCE_DIR}/runtime"
     "${SOURCE_DIR}/runtime/*")
set(bad "")
foreach(f IN LISTS folders)
  if(IS_DIRECTORY "${SOURCE_DIR}/runtime/${f}")
    list(FIND order "${f}" at)
    if(at EQUAL -1)
      string(APPEND bad "\n  runtime/${f}/ is in no place of the order "
                        "(keylane_subsystems in CMakeLists.txt)")
    endif()
  endif()
endforeach()

# Which folder each keylane header lives in.
set(i 0)
foreach(s IN LISTS order)
  if(NOT IS_DIRECTORY "${SOURCE_DIR}/runtime/${s}")
    string(APPEND bad "\n  runtime/${s}/ is in the order but not on disk")
  endif()
  file(GLOB_RECURSE hs RELATIVE "${SOURCE_DIR}/runtime/${s}/include"
       "${SOURCE_DIR}/runtime/${s}/include/*.hpp")
  foreach(h IN LISTS hs)
    string(MAKE_C_IDENTIFIER "${h}" id)
    set(home_${id} ${i})
    set(home_name_${id} ${s})
  endforeach()
  math(EXPR i "${i} + 1")
endforeach()

set(checked 0)
set(i 0)
foreach(s IN LISTS order)
  file(GLOB_RECURSE files "${SOURCE_DIR}/runtime/${s}/*.hpp"
       "${SOURCE_DIR}/runtime/${s}/*.cpp")
  foreach(f IN LISTS files)
    math(EXPR checked "${checked} + 1")
    file(RELATIVE_PATH rel "${SOURCE_DIR}" "${f}")
    get_filename_component(dir "${f}" DIRECTORY)
    file(STRINGS "${f}" lines REGEX "^[ \t]*#[ \t]*include[ \t]*[\"<]")
    foreach(line IN LISTS lines)
      foreach(h IN LISTS actor_headers)
        string(FIND "${line}" "${h}" at)
        if(NOT at EQUAL -1)
          string(APPEND bad "\n  ${rel}: ${line} (a header of actors/)")
        endif()
      endforeach()
      if(line MATCHES "[\"<](keylane/[^\">]+)[\">]")
        string(MAKE_C_IDENTIFIER "${CMAKE_MATCH_1}" id)
        if(DEFINED home_${id} AND home_${id} GREATER i)
          string(APPEND bad "\n  ${rel}: ${line} (runtime/${s}/ includes "
                            "runtime/${home_name_${id}}/, which comes after it)")
        endif()
      elseif(line MATCHES "\"([^\"/]+)\"")
        if(NOT EXISTS "${dir}/${CMAKE_MATCH_1}")
          string(APPEND bad "\n  ${rel}: ${line} (a private header of "
                            "another folder)")
        endif()
      endif()
    endforeach()
  endforeach()
  math(EXPR i "${i} + 1")
endforeach()

# 4. What <keylane/runtime.hpp> brings in, header by header.
set(todo "keylane/runtime.hpp")
set(seen "")
set(reached 0)
while(todo)
  list(POP_FRONT todo h)
  string(MAKE_C_IDENTIFIER "${h}" id)
  if(NOT DEFINED home_name_${id})
    continue()
  endif()
  list(APPEND seen "${h}")
  math(EXPR reached "${reached} + 1")
  file(STRINGS "${SOURCE_DIR}/runtime/${home_name_${id}}/include/${h}" lines
       REGEX "^[ \t]*#[ \t]*include[ \t]*[\"<]")
  foreach(line IN LISTS lines)
    if(line MATCHES "concurrentqueue|robin_map")
      string(APPEND bad "\n  ${h}: ${line} (reached from keylane/runtime.hpp)")
    elseif(line MATCHES "[\"<](keylane/[^\">]+)[\">]")
      list(FIND seen "${CMAKE_MATCH_1}" at_seen)
      list(FIND todo "${CMAKE_MATCH_1}" at_todo)
      if(at_seen EQUAL -1 AND at_todo EQUAL -1)
        list(APPEND todo "${CMAKE_MATCH_1}")
      endif()
    endif()
  endforeach()
endwhile()
if(reached LESS 10)
  string(APPEND bad "\n  only ${reached} headers reached from keylane/runtime.hpp")
endif()

if(bad)
  message(FATAL_ERROR "runtime/'s include direction is broken:${bad}")
endif()
message(STATUS "${checked} files under runtime/ include nothing from actors/ "
                "and nothing from a later subsystem (${SUBSYSTEMS}); the "
                "${reached} headers keylane/runtime.hpp brings in name no "
                "concurrentqueue or robin_map")
