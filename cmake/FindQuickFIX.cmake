# Finds QuickFIX (Debian's libquickfix-dev, which ships no CMake package),
# for the exchange example: sets QUICKFIX_INCLUDE_DIR and QUICKFIX_LIBRARY.
# A find module, so that CMAKE_DISABLE_FIND_PACKAGE_QuickFIX can stand for a
# machine without it (tests/packages_check.cmake does).
find_path(QUICKFIX_INCLUDE_DIR quickfix/Application.h)
find_library(QUICKFIX_LIBRARY quickfix)
include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(QuickFIX
  REQUIRED_VARS QUICKFIX_LIBRARY QUICKFIX_INCLUDE_DIR)
mark_as_advanced(QUICKFIX_INCLUDE_DIR QUICKFIX_LIBRARY)
