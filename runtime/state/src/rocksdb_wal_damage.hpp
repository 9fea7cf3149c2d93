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

#include <rocksdb/db.h>
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

/// What point-in-time recovery of a store drops: found by reading its
/// write-ahead logs record by record past the damage (rocksdb_wal_reader)
/// and comparing the writes after the recovered state's last sequence
/// number with the recovered store. Every key write has a sequence number
/// of its own, so the number of writes a damaged record held is the gap
/// in the numbers before the next readable record: the counts of writes
/// are exact, and the keys counted are never fewer than went back.
struct wal_loss {
  /// False when the writes after the damage cannot be counted: damage at
  /// the logs' end, past the last record that can be read, whose count of
  /// writes cannot be read either. The figures below then count only the
  /// readable writes.
  bool counted = false;
  /// Why they cannot be counted, when not `counted`.
  std::string why_not;
  /// Key writes after the recovered state's last.
  uint64_t writes = 0;
  /// Of them, those whose keys cannot be read (in damaged records).
  uint64_t unreadable = 0;
  /// Keys the readable ones write (put or erase), keylane's reserved
  /// entries not counted.
  uint64_t readable_keys = 0;
  /// Events the last readable write of each of those keys holds beyond
  /// the key's recovered state; valid when `events_read`.
  uint64_t readable_events = 0;
  /// False when a readable write's value is no keylane state record.
  bool events_read = true;

  /// The most keys that can have gone back: each readable key, and one
  /// for each unreadable write; valid when `counted`.
  [[nodiscard]] uint64_t keys_at_most() const noexcept {
    return readable_keys + unreadable;
  }
};

/// "the write-ahead log /d/000004.log is damaged (Corruption: checksum
/// mismatch, 18357 bytes unreadable)"
[[nodiscard]] std::string describe(const wal_damage& d);

/// The warning of a point-in-time recovery: the damage and what the
/// recovery drops, or (`read_only`) would drop.
[[nodiscard]] std::string describe(const wal_damage& d, const wal_loss& loss,
                                   bool read_only);

/// Measures what point-in-time recovery of the store at `path` drops;
/// `kept` is the store opened read-only with that recovery. Never fails:
/// a log it cannot read makes the loss not `counted`.
[[nodiscard]] wal_loss measure_wal_loss(const std::string& path,
                                        rocksdb::DB& kept);

} // namespace keylane::detail
