// SPDX-License-Identifier: Apache-2.0
#include "rocksdb_wal_damage.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <string_view>

#include <rocksdb/db.h>

namespace keylane::detail {

namespace {

using db_ptr = std::unique_ptr<rocksdb::DB>;

constexpr std::string_view dropping = ": dropping ";

} // namespace

void wal_damage_listener::Logv(const char*, va_list) {
  // Lines without a level: RocksDB's informational chatter.
}

void wal_damage_listener::Logv(rocksdb::InfoLogLevel level,
                               const char* format, va_list ap) {
  if (level < rocksdb::InfoLogLevel::WARN_LEVEL)
    return;
  char buf[2048];
  std::vsnprintf(buf, sizeof(buf), format, ap);
  std::string_view line{buf};
  // "[db/db_impl/db_impl_open.cc:982] /dir/000004.log: dropping 31388
  // bytes; Corruption: checksum mismatch"
  auto at = line.find(dropping);
  if (at == std::string_view::npos)
    return;
  auto start = line.rfind("] ", at);
  auto file = line.substr(start == std::string_view::npos ? 0 : start + 2,
                          at - (start == std::string_view::npos ? 0
                                                                : start + 2));
  if (file.size() < 4 || file.substr(file.size() - 4) != ".log")
    return;
  auto rest = line.substr(at + dropping.size());
  auto bytes = std::strtoull(std::string{rest}.c_str(), nullptr, 10);
  auto semi = rest.find("; ");
  std::lock_guard<std::mutex> guard{mtx_};
  if (std::find(damage_.files.begin(), damage_.files.end(), file)
      == damage_.files.end())
    damage_.files.emplace_back(file);
  damage_.bytes += bytes;
  if (damage_.what.empty() && semi != std::string_view::npos)
    damage_.what = std::string{rest.substr(semi + 2)};
}

wal_damage wal_damage_listener::damage() const {
  std::lock_guard<std::mutex> guard{mtx_};
  return damage_;
}

rocksdb::Status measure_wal_loss(const std::string& path,
                                 rocksdb::Options options, wal_loss& out) {
  auto open = [&](rocksdb::WALRecoveryMode mode, db_ptr& db) {
    options.wal_recovery_mode = mode;
    rocksdb::DB* raw = nullptr;
    auto st = rocksdb::DB::OpenForReadOnly(options, path, &raw);
    db.reset(raw);
    return st;
  };
  // Every record that can be read, and what point-in-time recovery keeps.
  db_ptr all, kept;
  auto st = open(rocksdb::WALRecoveryMode::kSkipAnyCorruptedRecords, all);
  if (st.ok())
    st = open(rocksdb::WALRecoveryMode::kPointInTimeRecovery, kept);
  if (!st.ok())
    return st;
  // A skipped record leaves a gap in the sequence; the last one read
  // still counts every write before it.
  auto last = all->GetLatestSequenceNumber();
  auto kept_last = kept->GetLatestSequenceNumber();
  out.writes = last > kept_last ? last - kept_last : 0;
  out.keys = 0;
  // What the logs hold is in the memtables of a read-only open (it never
  // flushes): the keys written there are the only ones that can differ.
  rocksdb::ReadOptions logs_only;
  logs_only.read_tier = rocksdb::kMemtableTier;
  logs_only.fill_cache = false;
  std::unique_ptr<rocksdb::Iterator> it{all->NewIterator(logs_only)};
  std::string value;
  for (it->SeekToFirst(); it->Valid(); it->Next()) {
    if (it->key().starts_with(rocksdb::Slice{"\0", 1}))
      continue; // keylane's reserved entries are not keys
    st = kept->Get(rocksdb::ReadOptions{}, it->key(), &value);
    if (st.IsNotFound() || (st.ok() && it->value().compare(value) != 0))
      ++out.keys;
    else if (!st.ok())
      return st;
  }
  return it->status();
}

std::string describe(const wal_damage& d) {
  std::string files;
  for (const auto& f : d.files)
    files += (files.empty() ? "" : ", ") + f;
  auto one = d.files.size() == 1;
  return std::string{one ? "the write-ahead log " : "the write-ahead logs "}
         + files + (one ? " is" : " are") + " damaged (" + d.what + ", "
         + std::to_string(d.bytes) + " bytes unreadable)";
}

std::string describe(const wal_damage& d, const wal_loss& loss,
                     bool read_only) {
  auto head = "point-in-time recovery (state.recover = \"point_in_time\"): "
              + describe(d);
  // RocksDB drops the rest of a damaged record's 32 KiB block with it, so
  // in a small log the whole tail may be unreadable: say so beside counts
  // that may be 0.
  auto writes = std::to_string(loss.writes);
  auto keys = std::to_string(loss.keys);
  if (read_only)
    return head + "; read as of the damage, read-only: nothing on disk"
                  " changed. A writer's recovery would drop for good the"
                  " unreadable bytes and the " + writes + " key writes"
                  " readable after them: " + keys + " keys would go back to"
                  " an older state or to none, and any keys the unreadable"
                  " bytes held";
  return head + "; opened as of the damage, dropping for good the"
                " unreadable bytes and the " + writes + " key writes"
                " readable after them: " + keys + " keys went back to an"
                " older state or to none, and any keys the unreadable bytes"
                " held. Set state.recover back to \"strict\"";
}

} // namespace keylane::detail
