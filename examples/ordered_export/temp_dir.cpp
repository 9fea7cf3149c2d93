// SPDX-License-Identifier: Apache-2.0
#include "temp_dir.hpp"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <system_error>
#include <vector>

#include <keylane/errc.hpp>

namespace ordered_export {

caf::expected<temp_dir> temp_dir::make(const std::string& prefix) {
  auto pattern = "/tmp/" + prefix + ".XXXXXX";
  std::vector<char> buf(pattern.begin(), pattern.end());
  buf.push_back('\0');
  if (mkdtemp(buf.data()) == nullptr)
    return keylane::make_error(keylane::errc::startup_failed,
                               "cannot make a directory " + pattern + ": "
                                 + std::strerror(errno));
  return temp_dir{std::string{buf.data()}};
}

temp_dir::~temp_dir() {
  if (path_.empty())
    return;
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

} // namespace ordered_export
