// SPDX-License-Identifier: Apache-2.0
#pragma once

// A damaged write-ahead log as RocksDB reports it while opening a state
// store, and what point-in-time recovery of it drops. RocksDB's status
// for such an open says only "Corruption: checksum mismatch": the file and
// the bytes it could not read go to its info log, so the open listens there.

#include <cstdarg>
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include <rocksdb/env.h>
#include <rocksdb/options.h>
#include <rocksdb/status.h>

namespace keylane::detail {

/// What RocksDB reported dropping from write-ahead logs during one open.
struct wal_damage {
  /// The damaged logs, as RocksDB names them, each once.
  std::vector<std::string> files;
  /// Bytes RocksDB dropped from them: each damaged record and the rest of
  /// its 32 KiB block, whose records it no longer trusts.
  uint64_t bytes = 0;
  /// RocksDB's words for the first damage ("Corruption: checksum mismatch").
  std::string what;

  /// True when no log was reported damaged.
  [[nodiscard]] bool empty() const noexcept {
    return files.empty();
  }
};

/// A RocksDB info logger that writes nothing and keeps the reports of
/// damaged write-ahead logs. With a logger of its own a read-only open
/// writes no LOG file into the directory (a running writer's LOG is there,
/// and the reader may have no right to write). RocksDB 7.8 logs each damage
/// as the warning "<dir>/<n>.log: dropping <bytes> bytes; <status>"; words
/// of a later version that do not match leave `damage()` empty: the open
/// then reports RocksDB's status alone, and tests/state_wal_test.cpp, which
/// wants the file named, fails. Thread-safe: RocksDB may log from its own
/// threads.
class wal_damage_listener final : public rocksdb::Logger {
public:
  using rocksdb::Logger::Logv;
  void Logv(const char* format, va_list ap) override;
  void Logv(rocksdb::InfoLogLevel level, const char* format,
            va_list ap) override;

  [[nodiscard]] wal_damage damage() const;

private:
  mutable std::mutex mtx_;
  wal_damage damage_;
};

/// What point-in-time recovery of the store at `path` drops: found by
/// opening it read-only twice, once skipping only the damaged records and
/// once stopping at the first, and comparing the keys the logs hold. The
/// damaged records' own writes cannot be read, so they are in neither count.
struct wal_loss {
  /// Key writes (one per key of each batch) after the damage.
  uint64_t writes = 0;
  /// Keys whose state goes back to an older one, or to none (a key erased
  /// after the damage comes back, uncounted: the erase left no value).
  uint64_t keys = 0;
};

/// "the write-ahead log /d/000004.log is damaged (Corruption: checksum
/// mismatch, 18357 bytes unreadable)"
[[nodiscard]] std::string describe(const wal_damage& d);

/// The warning of a point-in-time recovery: the damage and what the
/// recovery drops, or (`read_only`) would drop.
[[nodiscard]] std::string describe(const wal_damage& d, const wal_loss& loss,
                                   bool read_only);

/// Measures `out` with `options` (a read-only open's); RocksDB's status.
[[nodiscard]] rocksdb::Status measure_wal_loss(const std::string& path,
                                               rocksdb::Options options,
                                               wal_loss& out);

} // namespace keylane::detail
