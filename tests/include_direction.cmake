# Fails if a file under runtime/ includes a header that lives under actors/:
# the runtime (config, ingress, output, park service, the facade) is the
# lower layer, and the actors build on it, never the other way round.
# Usage: cmake -DSOURCE_DIR=<repo> -P include_direction.cmake
file(GLOB_RECURSE actor_headers RELATIVE "${SOURCE_DIR}/actors/include"
     "${SOURCE_DIR}/actors/include/*.hpp")
if(NOT actor_headers)
  message(FATAL_ERROR "no headers found under ${SOURCE_DIR}/actors/include")
endif()
file(GLOB_RECURSE runtime_files "${SOURCE_DIR}/runtime/*.hpp"
     "${SOURCE_DIR}/runtime/*.cpp")
set(bad "")
foreach(f IN LISTS runtime_files)
  file(STRINGS "${f}" lines REGEX "^[ \t]*#[ \t]*include[ \t]*[\"<]")
  foreach(line IN LISTS lines)
    foreach(h IN LISTS actor_headers)
      string(FIND "${line}" "${h}" at)
      if(NOT at EQUAL -1)
        file(RELATIVE_PATH rel "${SOURCE_DIR}" "${f}")
        string(APPEND bad "\n  ${rel}: ${line}")
      endif()
    endforeach()
  endforeach()
endforeach()
if(bad)
  message(FATAL_ERROR "runtime/ includes headers of actors/ (actors build on "
                      "the runtime, not the other way round):${bad}")
endif()
list(LENGTH runtime_files n)
message(STATUS "${n} files under runtime/ include nothing from actors/")
