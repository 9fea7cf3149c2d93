// SPDX-License-Identifier: Apache-2.0
#include "temp_dir.hpp"

#include <fstream>
#include <iterator>
#include <stdlib.h>

#include <catch2/catch.hpp>

namespace fs = std::filesystem;

namespace test_support {

temp_dir::temp_dir() {
  auto pattern = (fs::temp_directory_path() / "keylane-test-XXXXXX").string();
  REQUIRE(::mkdtemp(pattern.data()) != nullptr);
  path = pattern;
}

temp_dir::~temp_dir() {
  std::error_code ec; // a destructor must not throw; leftovers are harmless
  fs::remove_all(path, ec);
}

std::string temp_dir::sub(const std::string& name) const {
  return (path / name).string();
}

std::string temp_dir::write(const std::string& name,
                            const std::string& text) const {
  auto file = sub(name);
  std::ofstream{file} << text;
  return file;
}

std::size_t temp_dir::files() const {
  return static_cast<std::size_t>(
    std::distance(fs::directory_iterator{path}, fs::directory_iterator{}));
}

} // namespace test_support
