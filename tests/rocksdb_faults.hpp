// SPDX-License-Identifier: Apache-2.0
#pragma once

// A RocksDB file system whose writes fail on demand, for the disk-fault
// tests of the state store: set a fault and every write RocksDB makes from
// then on (a file created, appended, synced, renamed) fails as a full disk
// or a broken one would, an append leaving half its bytes behind (a torn
// record); clear it and the disk works again. Open the store on `env()`
// with `keylane::detail::open_rocksdb_state_store_on`.

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>

#include <rocksdb/env.h>
#include <rocksdb/file_system.h>
#include <rocksdb/io_status.h>

namespace disk_faults {

/// What a write meets.
enum class fault {
  none,     ///< it works
  no_space, ///< ENOSPC: RocksDB's NoSpace, which it recovers from by itself
  io_error, ///< EIO: a plain I/O error, after which RocksDB refuses writes
};

/// Thread-safe: `set` and `injected` from any thread, while RocksDB's
/// threads write through `env()`.
class rocksdb_faults {
public:
  rocksdb_faults()
    : fs_(std::make_shared<failing_fs>(this)),
      env_(rocksdb::NewCompositeEnv(fs_)) {
  }

  /// The Env to open the store on; lives as long as this object.
  rocksdb::Env* env() const noexcept { return env_.get(); }

  /// From now on, every write meets `f`.
  void set(fault f) noexcept { fault_.store(f); }

  /// How many writes failed so far.
  uint64_t injected() const noexcept { return injected_.load(); }

private:
  rocksdb::IOStatus check(const char* what) {
    switch (fault_.load()) {
      case fault::none:
        return rocksdb::IOStatus::OK();
      case fault::no_space:
        ++injected_;
        return rocksdb::IOStatus::NoSpace("injected", what);
      case fault::io_error:
        ++injected_;
        return rocksdb::IOStatus::IOError("injected", what);
    }
    return rocksdb::IOStatus::OK();
  }

  class failing_file : public rocksdb::FSWritableFileOwnerWrapper {
  public:
    failing_file(rocksdb_faults* owner,
                 std::unique_ptr<rocksdb::FSWritableFile> f)
      : FSWritableFileOwnerWrapper(std::move(f)), owner_(owner) {
    }
    rocksdb::IOStatus Append(const rocksdb::Slice& data,
                             const rocksdb::IOOptions& o,
                             rocksdb::IODebugContext* dbg) override {
      if (auto st = owner_->check("append"); !st.ok()) {
        // A full disk takes what fits: half of it, a torn record.
        static_cast<void>(target()->Append(
          rocksdb::Slice{data.data(), data.size() / 2}, o, dbg));
        return st;
      }
      return target()->Append(data, o, dbg);
    }
    rocksdb::IOStatus Append(const rocksdb::Slice& data,
                             const rocksdb::IOOptions& o,
                             const rocksdb::DataVerificationInfo&,
                             rocksdb::IODebugContext* dbg) override {
      return Append(data, o, dbg);
    }
    rocksdb::IOStatus PositionedAppend(const rocksdb::Slice& data,
                                       uint64_t offset,
                                       const rocksdb::IOOptions& o,
                                       rocksdb::IODebugContext* dbg) override {
      if (auto st = owner_->check("positioned append"); !st.ok())
        return st;
      return target()->PositionedAppend(data, offset, o, dbg);
    }
    rocksdb::IOStatus PositionedAppend(const rocksdb::Slice& data,
                                       uint64_t offset,
                                       const rocksdb::IOOptions& o,
                                       const rocksdb::DataVerificationInfo&,
                                       rocksdb::IODebugContext* dbg) override {
      return PositionedAppend(data, offset, o, dbg);
    }
    rocksdb::IOStatus Sync(const rocksdb::IOOptions& o,
                           rocksdb::IODebugContext* dbg) override {
      if (auto st = owner_->check("sync"); !st.ok())
        return st;
      return target()->Sync(o, dbg);
    }
    rocksdb::IOStatus Fsync(const rocksdb::IOOptions& o,
                            rocksdb::IODebugContext* dbg) override {
      if (auto st = owner_->check("fsync"); !st.ok())
        return st;
      return target()->Fsync(o, dbg);
    }

  private:
    rocksdb_faults* owner_;
  };

  class failing_fs : public rocksdb::FileSystemWrapper {
  public:
    explicit failing_fs(rocksdb_faults* owner)
      : FileSystemWrapper(rocksdb::FileSystem::Default()), owner_(owner) {
    }
    const char* Name() const override { return "keylane_test_failing_fs"; }
    rocksdb::IOStatus
    NewWritableFile(const std::string& name, const rocksdb::FileOptions& fo,
                    std::unique_ptr<rocksdb::FSWritableFile>* out,
                    rocksdb::IODebugContext* dbg) override {
      if (auto st = owner_->check("create"); !st.ok())
        return st;
      std::unique_ptr<rocksdb::FSWritableFile> f;
      auto st = target()->NewWritableFile(name, fo, &f, dbg);
      if (st.ok())
        out->reset(new failing_file(owner_, std::move(f)));
      return st;
    }
    rocksdb::IOStatus
    ReopenWritableFile(const std::string& name, const rocksdb::FileOptions& fo,
                       std::unique_ptr<rocksdb::FSWritableFile>* out,
                       rocksdb::IODebugContext* dbg) override {
      if (auto st = owner_->check("reopen"); !st.ok())
        return st;
      std::unique_ptr<rocksdb::FSWritableFile> f;
      auto st = target()->ReopenWritableFile(name, fo, &f, dbg);
      if (st.ok())
        out->reset(new failing_file(owner_, std::move(f)));
      return st;
    }
    rocksdb::IOStatus RenameFile(const std::string& from, const std::string& to,
                                 const rocksdb::IOOptions& o,
                                 rocksdb::IODebugContext* dbg) override {
      if (auto st = owner_->check("rename"); !st.ok())
        return st;
      return target()->RenameFile(from, to, o, dbg);
    }

  private:
    rocksdb_faults* owner_;
  };

  std::atomic<fault> fault_{fault::none};
  std::atomic<uint64_t> injected_{0};
  std::shared_ptr<failing_fs> fs_;
  std::unique_ptr<rocksdb::Env> env_;
};

} // namespace disk_faults
