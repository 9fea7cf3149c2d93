// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include <caf/expected.hpp>

namespace keylane::detail {

/// The sink's spill file: records appended at the end and read back by
/// offset, the whole file emptied when nothing in it is wanted any more.
/// Created in a directory (made if missing) under a name of its own and
/// removed when closed. Not thread-safe: one owner, the sink.
class spill_file {
public:
  /// Creates a fresh spill file in `dir`.
  static caf::expected<std::unique_ptr<spill_file>> open(const std::string& dir);

  ~spill_file();
  spill_file(const spill_file&) = delete;
  spill_file& operator=(const spill_file&) = delete;

  /// Appends `bytes`; returns their offset. Fails (the file unchanged) when
  /// the disk refuses, with the system's reason.
  caf::expected<uint64_t> append(std::string_view bytes);

  /// The `len` bytes at `offset`.
  caf::expected<std::string> read(uint64_t offset, uint32_t len) const;

  /// Drops every record (call when none is wanted any more).
  void clear();

  /// Bytes in the file now.
  [[nodiscard]] uint64_t size() const noexcept { return end_; }

  /// Its path.
  [[nodiscard]] const std::string& path() const noexcept { return path_; }

private:
  spill_file(int fd, std::string path) : fd_(fd), path_(std::move(path)) {}
  int fd_;
  std::string path_;
  uint64_t end_ = 0;
};

} // namespace keylane::detail
