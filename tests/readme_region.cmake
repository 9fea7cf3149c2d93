# Checks that the lines of SOURCE between "// readme:begin" and
# "// readme:end" appear in README word for word (as a C++ block), so a
# snippet users copy is code CTest builds.
#   cmake -DREADME=<README.md> -DSOURCE=<file> -P readme_region.cmake
file(READ "${README}" readme)
file(READ "${SOURCE}" source)
string(FIND "${source}" "// readme:begin\n" begin)
string(FIND "${source}" "// readme:end\n" end)
if(begin EQUAL -1 OR end EQUAL -1 OR end LESS begin)
  message(FATAL_ERROR "${SOURCE}: no // readme:begin ... // readme:end region")
endif()
math(EXPR from "${begin} + 16")
math(EXPR length "${end} - ${from}")
string(SUBSTRING "${source}" ${from} ${length} region)
string(FIND "${readme}" "```cpp\n${region}```" at)
if(at EQUAL -1)
  file(WRITE "${CMAKE_CURRENT_BINARY_DIR}/readme_region.cpp" "${region}")
  message(FATAL_ERROR "README.md has no C++ block that is the readme region "
    "of ${SOURCE} (the region is in ${CMAKE_CURRENT_BINARY_DIR}/"
    "readme_region.cpp): copy it into the README")
endif()
