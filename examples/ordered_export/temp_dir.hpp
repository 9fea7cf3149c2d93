// SPDX-License-Identifier: Apache-2.0
#pragma once

// A directory of the program's own under /tmp (the spill mode's
// sink.spill_path), removed with everything in it when the program ends.

#include <string>

#include <caf/expected.hpp>

namespace ordered_export {

/// Owns a fresh directory made with mkdtemp; removes it on destruction.
class temp_dir {
public:
  /// Makes "/tmp/<prefix>.XXXXXX".
  [[nodiscard]] static caf::expected<temp_dir> make(const std::string& prefix);

  temp_dir(temp_dir&& other) noexcept : path_(std::move(other.path_)) {
    other.path_.clear();
  }
  temp_dir& operator=(temp_dir&&) = delete;
  temp_dir(const temp_dir&) = delete;
  temp_dir& operator=(const temp_dir&) = delete;

  /// Removes the directory and its contents (errors are ignored: it is
  /// under /tmp).
  ~temp_dir();

  /// The directory's path.
  [[nodiscard]] const std::string& path() const noexcept { return path_; }

private:
  explicit temp_dir(std::string path) : path_(std::move(path)) {}
  std::string path_;
};

} // namespace ordered_export
