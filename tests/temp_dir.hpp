// SPDX-License-Identifier: Apache-2.0
#pragma once

// A scratch directory for a test's files (stores, spill files, configs).

#include <cstddef>
#include <filesystem>
#include <string>

namespace test_support {

/// A fresh directory under the system's temporary directory, made with
/// mkdtemp (so no other run shares it) and removed with everything in it
/// at scope exit. The test fails (REQUIRE) when it cannot be made.
struct temp_dir {
  /// A directory named `keylane-test-XXXXXX`, the X's made unique.
  temp_dir();
  ~temp_dir();
  temp_dir(const temp_dir&) = delete;
  temp_dir& operator=(const temp_dir&) = delete;

  /// The path of `name` inside it.
  [[nodiscard]] std::string sub(const std::string& name) const;

  /// Writes `text` to the file `name` inside it; the file's path.
  std::string write(const std::string& name, const std::string& text) const;

  /// How many entries it holds.
  [[nodiscard]] std::size_t files() const;

  std::filesystem::path path;
};

} // namespace test_support
