// SPDX-License-Identifier: Apache-2.0
// The durable state store: a RocksDB database, one entry per key (the key
// as state_key.hpp spells it, the record's bytes as the value), written
// through RocksDB's write-ahead log. RocksDB's names stay in the
// rocksdb_* files: this one (the records), rocksdb_state_open.cpp (opening
// and checking a store) and rocksdb_wal_damage.*, which reads what RocksDB
// says of a damaged log.

#include <memory>
#include <mutex>
#include <shared_mutex>
#include <utility>

#include <rocksdb/db.h>
#include <rocksdb/iterator.h>
#include <rocksdb/options.h>
#include <rocksdb/write_batch.h>

#include "rocksdb_state_store.hpp"
#include "state_key.hpp"
#include "keylane/errc.hpp"
#include "keylane/state_store.hpp"

namespace keylane::detail {

caf::error refuse(const std::string& path, const std::string& what) {
  return make_error(errc::state_store_failed,
                    "state store " + path + ": " + what);
}

caf::error refuse(const std::string& path, const std::string& what,
                  const rocksdb::Status& st) {
  auto text = st.ToString();
  // RocksDB's words for a held lock: "IO error: While lock file: ..." when
  // another process holds it, "lock hold by current process" for this one.
  if (st.IsIOError() && text.find("lock file") != std::string::npos)
    text += " (another process has the store open for writing: a running"
            " runtime, or keylane-state erase; only one may)";
  else if (st.IsIOError()
           && text.find("lock hold by current process") != std::string::npos)
    text += " (this process has the store open for writing already)";
  return refuse(path, what + ": " + text);
}

namespace {

/// Thread-safe: RocksDB serves concurrent calls; one mutex orders `write`
/// and `erase` among themselves, so erase's look-then-delete is atomic.
/// `write` is one WriteBatch through the WAL (all or nothing after a
/// crash; fsynced before it returns when `sync`). `scan` iterates a
/// snapshot taken when it starts, so `fn` may read the store meanwhile
/// (not write it: a write may reopen the database, which waits for the
/// scan).
///
/// After a failed write RocksDB refuses every later one until it recovers,
/// which it may not do by itself (after an I/O error that is not a full
/// disk, only when the database is opened again). So the write after a
/// failed one first asks RocksDB to resume and, where it cannot, closes and
/// reopens the database (the WAL holds every successful write; a record
/// the failure left half written at its end is dropped as a crash's would
/// be). While that reopen fails, reads go on from a read-only open.
class rocksdb_state_store final : public state_store {
public:
  rocksdb_state_store(std::string path, db_ptr db, bool read_only,
                      rocksdb::Env* env)
    : path_(std::move(path)), db_(std::move(db)), read_only_(read_only),
      env_(env) {
  }

  ~rocksdb_state_store() override {
    // Close reports a failure to flush or sync, which no one could act on
    // here: the WAL holds every successful write anyway.
    if (db_)
      static_cast<void>(db_->Close());
  }

  caf::expected<std::optional<std::string>> read(const key& k) override {
    std::shared_lock<std::shared_mutex> db_guard{db_mtx_};
    if (!db_)
      return closed();
    std::string value;
    auto st = db_->Get(rocksdb::ReadOptions{},
                       slice(detail::encode_state_key(k)), &value);
    if (st.IsNotFound())
      return std::optional<std::string>{};
    if (!st.ok())
      return refuse(path_, "cannot read the state of key '" + k.to_string()
                             + "'",
                    st);
    return std::optional<std::string>{std::move(value)};
  }

  caf::error write(const std::vector<state_entry>& entries,
                   bool sync) override {
    if (read_only_)
      return refuse(path_, "opened read-only: cannot write");
    if (entries.empty())
      return caf::none;
    rocksdb::WriteBatch batch;
    for (const auto& e : entries) {
      auto st = batch.Put(slice(detail::encode_state_key(e.k)),
                          slice(e.bytes));
      if (!st.ok())
        return refuse(path_, "cannot batch a write", st);
    }
    rocksdb::WriteOptions opts;
    opts.sync = sync;
    std::lock_guard<std::mutex> guard{write_mtx_};
    if (auto err = heal())
      return err;
    std::shared_lock<std::shared_mutex> db_guard{db_mtx_};
    auto st = db_->Write(opts, &batch);
    if (!st.ok()) {
      broken_ = true;
      return refuse(path_, "cannot write", st);
    }
    return caf::none;
  }

  caf::expected<bool> erase(const key& k) override {
    if (read_only_)
      return refuse(path_, "opened read-only: cannot erase");
    auto name = detail::encode_state_key(k);
    std::lock_guard<std::mutex> guard{write_mtx_};
    if (auto err = heal())
      return err;
    std::shared_lock<std::shared_mutex> db_guard{db_mtx_};
    std::string value;
    auto st = db_->Get(rocksdb::ReadOptions{}, slice(name), &value);
    if (st.IsNotFound())
      return false;
    if (!st.ok())
      return refuse(path_, "cannot read the state of key '" + k.to_string()
                             + "'",
                    st);
    // An operator's reset: durable when it returns.
    rocksdb::WriteOptions opts;
    opts.sync = true;
    st = db_->Delete(opts, slice(name));
    if (!st.ok()) {
      broken_ = true;
      return refuse(path_, "cannot erase the state of key '" + k.to_string()
                             + "'",
                    st);
    }
    return true;
  }

  caf::error scan(
    const std::function<bool(const key&, std::string_view)>& fn) override {
    std::shared_lock<std::shared_mutex> db_guard{db_mtx_};
    if (!db_)
      return closed().error();
    rocksdb::ReadOptions opts;
    opts.fill_cache = false; // a full scan would evict the hot blocks
    std::unique_ptr<rocksdb::Iterator> it{db_->NewIterator(opts)};
    // Reserved keys start with "\0": seek past them.
    for (it->Seek(rocksdb::Slice{"\x01", 1}); it->Valid(); it->Next()) {
      auto name = it->key();
      auto k = detail::decode_state_key({name.data(), name.size()});
      if (!k)
        return refuse(path_, "holds the key '" + name.ToString(true)
                               + "' (hex), which is not a keylane state key");
      if (!fn(*k, {it->value().data(), it->value().size()}))
        return caf::none;
    }
    if (!it->status().ok())
      return refuse(path_, "cannot scan", it->status());
    return caf::none;
  }

  std::string describe() const override {
    return "rocksdb at " + path_ + (read_only_ ? " (read-only)" : "");
  }

private:
  caf::expected<std::optional<std::string>> closed() const {
    return refuse(path_, "closed after a failed write, and not open again"
                         " yet (it is reopened at the next write)");
  }

  // Under write_mtx_: makes the database writable again after a failed
  // write, if it can.
  caf::error heal() {
    if (!broken_)
      return caf::none;
    {
      std::shared_lock<std::shared_mutex> db_guard{db_mtx_};
      if (db_ && !fallback_) {
        auto st = db_->Resume();
        if (st.ok()) {
          broken_ = false;
          return caf::none;
        }
        if (st.IsBusy()) // its own recovery from a full disk is running
          return refuse(path_, "cannot write yet: recovering from a failed"
                               " write", st);
      }
    }
    std::unique_lock<std::shared_mutex> db_guard{db_mtx_};
    if (db_)
      static_cast<void>(db_->Close()); // it fails: it failed before
    db_.reset();
    rocksdb::DB* raw = nullptr;
    auto st = rocksdb::DB::Open(make_options(false, env_), path_, &raw);
    if (st.ok()) {
      db_.reset(raw);
      broken_ = false;
      fallback_ = false;
      return caf::none;
    }
    auto err = refuse(path_, "cannot reopen for writing after a failed"
                             " write", st);
    // A read-only open writes nothing, so it works on a full disk.
    raw = nullptr;
    if (rocksdb::DB::OpenForReadOnly(make_options(true, env_), path_, &raw)
          .ok())
      db_.reset(raw);
    fallback_ = true;
    return err;
  }

  std::string path_;
  // Swapped only by `heal`, under both locks; used under db_mtx_.
  db_ptr db_;
  bool read_only_;
  rocksdb::Env* env_;
  std::mutex write_mtx_;
  std::shared_mutex db_mtx_;
  bool broken_ = false;   // a write failed since the last one that worked
  bool fallback_ = false; // db_ is a read-only open while writes fail
};

} // namespace

std::unique_ptr<state_store>
make_rocksdb_state_store(std::string path, db_ptr db, bool read_only,
                         rocksdb::Env* env) {
  return std::make_unique<rocksdb_state_store>(std::move(path), std::move(db),
                                               read_only, env);
}

} // namespace keylane::detail
