// SPDX-License-Identifier: Apache-2.0
#pragma once

// RocksDB's write-ahead log files, read record by record past any damage.
// Point-in-time recovery of a damaged log drops everything after the
// damage; to say how much that is, keylane reads the logs itself: RocksDB's
// own reader that skips damaged records (kSkipAnyCorruptedRecords) fails
// outright ("Write batch content corrupted") on some damage that
// point-in-time recovery opens.
//
// The format is RocksDB's log format (its wiki's "Write Ahead Log File
// Format", db/log_format.h): 32 KiB blocks of physical records, each with
// a header of a masked CRC32C (of the type byte, the recycled log's
// number if any, and the payload), a 16-bit length and a type, and never
// crossing a block; a logical record is one full record or a first, any
// middles and a last. A write batch's payload begins with its sequence
// number (8 bytes) and its count of key writes (4 bytes). Write-ahead log
// compression (off in keylane's stores) is not read.

#include <cstdint>
#include <string>
#include <vector>

#include <caf/expected.hpp>

namespace keylane::detail {

/// One logical record of a write-ahead log, or a stretch of one that
/// cannot be read as records.
struct wal_record {
  enum class kind {
    /// Whole: every piece there and every checksum right.
    whole,
    /// Every piece there, but a checksum is wrong: the bytes as on disk,
    /// some of them changed.
    damaged,
    /// Bytes that cannot be told apart into records: a damaged header, a
    /// record cut off, or the pieces of a record whose start was lost.
    lost,
  };
  kind what = kind::whole;
  /// The record's bytes (empty when `lost`).
  std::string payload;
};

/// Every logical record of the write-ahead logs (`NNNNNN.log`) in the
/// directory `dir`, the logs in the order of their numbers, each log's
/// records in order; consecutive unreadable stretches are one `lost`.
/// An error if a log cannot be read.
[[nodiscard]] caf::expected<std::vector<wal_record>>
read_wal_records(const std::string& dir);

/// CRC32C (Castagnoli) of `n` bytes, extending `crc` as RocksDB's
/// crc32c::Extend does.
[[nodiscard]] uint32_t crc32c_extend(uint32_t crc, const char* data,
                                     size_t n) noexcept;

} // namespace keylane::detail
