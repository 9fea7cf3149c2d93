# Finds CAF's core library and headers. Debian's libcaf-dev ships neither a
# CMake package nor a pkg-config file, so look for the files themselves.
# Defines the imported target CAF::core.
find_path(CAF_INCLUDE_DIR caf/all.hpp)
find_library(CAF_CORE_LIBRARY NAMES caf_core)
include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(CAF
  REQUIRED_VARS CAF_CORE_LIBRARY CAF_INCLUDE_DIR)
if(CAF_FOUND AND NOT TARGET CAF::core)
  add_library(CAF::core UNKNOWN IMPORTED)
  set_target_properties(CAF::core PROPERTIES
    IMPORTED_LOCATION "${CAF_CORE_LIBRARY}"
    INTERFACE_INCLUDE_DIRECTORIES "${CAF_INCLUDE_DIR}")
endif()
mark_as_advanced(CAF_INCLUDE_DIR CAF_CORE_LIBRARY)
