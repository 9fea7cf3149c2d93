// SPDX-License-Identifier: Apache-2.0
// Opening the durable state store: where the directory stands, RocksDB's
// options, the store's identity, and a damaged write-ahead log's recovery.

#include <filesystem>
#include <memory>
#include <system_error>
#include <utility>

#include <rocksdb/cache.h>
#include <rocksdb/db.h>
#include <rocksdb/env.h>
#include <rocksdb/filter_policy.h>
#include <rocksdb/options.h>
#include <rocksdb/table.h>
#include <rocksdb/write_batch.h>

#include "rocksdb_state_store.hpp"
#include "rocksdb_wal_damage.hpp"
#include "state_key.hpp"
#include "keylane/detail/rocksdb_env.hpp"
#include "keylane/errc.hpp"
#include "keylane/log.hpp"
#include "keylane/state_store.hpp"

namespace keylane {

namespace {

namespace fs = std::filesystem;

using detail::db_ptr;
using detail::refuse;
using detail::slice;

} // namespace

namespace detail {

rocksdb::Options make_options(bool read_only, rocksdb::Env* env) {
  rocksdb::Options o;
  if (env != nullptr)
    o.env = env;
  // Records are small and read one key at a time: when a key's lane starts
  // (its first load is usually a miss: a new key), and when it changes.
  // A bloom filter (10 bits a key, about 1% false positives) answers most
  // misses without reading a block, and a block cache keeps hot blocks
  // decoded. Not OptimizeForPointLookup: RocksDB documents it only for
  // databases that are never iterated, and scan iterates.
  rocksdb::BlockBasedTableOptions table;
  table.filter_policy.reset(rocksdb::NewBloomFilterPolicy(10));
  table.block_cache = rocksdb::NewLRUCache(32u << 20);
  o.table_factory.reset(rocksdb::NewBlockBasedTableFactory(table));
  // The same for the memtable, where recent writes (and so most keys of a
  // busy runtime) live: without it a miss walks the whole skiplist (a new
  // key's load cost ~3 us in keylane_bench's new_keys, most of it there).
  o.memtable_prefix_bloom_size_ratio = 0.1;
  o.memtable_whole_key_filtering = true;
  // Every open starts a new info LOG; keep a few, not RocksDB's 1000.
  o.keep_log_file_num = 5;
  // A crash mid-write leaves the write-ahead log's last record cut off:
  // that tail is dropped and the open goes on. A record that is there in
  // full but fails its checksum is damage, and fails the open. RocksDB's
  // default, kPointInTimeRecovery, stops reading at the damage and opens
  // with what came before (older states, valid folds, and no error);
  // kAbsoluteConsistency refuses the crash's cut-off tail too. Measured
  // with 7.8.3: a byte flipped in the middle of a log or in its last record
  // is refused; a log cut anywhere, or with zeros or half a record after
  // its end, opens.
  o.wal_recovery_mode = rocksdb::WALRecoveryMode::kTolerateCorruptedTailRecords;
  // A read-only open must not write into the directory: with a logger of
  // our own RocksDB opens no LOG file for it (7.8 creates none; measured).
  if (read_only)
    o.info_log = std::make_shared<detail::wal_damage_listener>();
  return o;
}

} // namespace detail

namespace {

using detail::make_options;

/// The refusal of a damaged write-ahead log, with the way forward.
caf::error refuse_damage(const std::string& path, const detail::wal_damage& d) {
  return refuse(path, detail::describe(d)
                        + ": reading it only up to the damage would roll"
                          " keys back to older states without a word, so"
                          " the store is not opened and nothing in it was"
                          " changed. To open it as of the damage, dropping"
                          " for good what the log holds after it, start"
                          " once with state.recover = \"point_in_time\""
                          " (copy the directory first; docs/state.md)");
}

/// What a path holds, before RocksDB touches it.
enum class place { missing, empty, database, other };

caf::expected<place> inspect(const std::string& path) {
  std::error_code ec;
  auto st = fs::status(path, ec);
  if (st.type() == fs::file_type::not_found)
    return place::missing;
  if (ec)
    return refuse(path, "cannot inspect: " + ec.message());
  if (!fs::is_directory(st))
    return refuse(path, "not a directory (a RocksDB state store is a"
                        " directory)");
  // A RocksDB database always has a CURRENT file naming its MANIFEST.
  if (fs::is_regular_file(fs::path{path} / "CURRENT", ec))
    return place::database;
  auto it = fs::directory_iterator{path, ec};
  if (ec)
    return refuse(path, "cannot list: " + ec.message());
  return it == fs::directory_iterator{} ? place::empty : place::other;
}

/// Whether the database at `path` carries keylane's marker (true), or no
/// entry at all (false: a store whose first open stopped before the marker
/// was written; an error unless `adopt_empty`); an error for any other
/// database.
caf::expected<bool> identify(rocksdb::DB& db, const std::string& path,
                             bool adopt_empty) {
  std::string value;
  auto st = db.Get(rocksdb::ReadOptions{}, slice(detail::state_format_key),
                   &value);
  if (st.ok()) {
    if (value != detail::state_format_version)
      return refuse(path, "a keylane state store of format '" + value
                            + "', but this build reads format "
                            + std::string{detail::state_format_version}
                            + "; use a matching keylane");
    return true;
  }
  if (!st.IsNotFound())
    return refuse(path, "cannot read keylane's marker", st);
  std::unique_ptr<rocksdb::Iterator> it{db.NewIterator({})};
  it->SeekToFirst();
  if (!it->status().ok())
    return refuse(path, "cannot read", it->status());
  if (!it->Valid() && adopt_empty)
    return false;
  return refuse(path, "not a keylane state store: a RocksDB database"
                      " without keylane's marker (a database of another"
                      " program?); refusing to touch it");
}

// Only the default column family: a keylane store uses nothing else, and
// opening a database without naming all of its families fails anyway.
caf::error check_column_families(const std::string& path, rocksdb::Env* env) {
  std::vector<std::string> families;
  auto st = rocksdb::DB::ListColumnFamilies(make_options(true, env), path,
                                            &families);
  if (!st.ok())
    return refuse(path, "cannot open", st);
  if (families.size() == 1 && families[0] == rocksdb::kDefaultColumnFamilyName)
    return caf::none;
  std::string names;
  for (const auto& f : families)
    names += (names.empty() ? "'" : ", '") + f + "'";
  return refuse(path, "not a keylane state store: a RocksDB database with"
                      " the column families " + names
                        + " (a database of another program?); refusing to"
                          " touch it");
}

/// A read-only open; after a point-in-time recovery of a damaged
/// write-ahead log, what RocksDB reported and what the recovery drops
/// (`damage` is empty when the logs are whole).
struct read_only_open {
  db_ptr db;
  detail::wal_damage damage;
  detail::wal_loss loss;
};

caf::expected<read_only_open> open_read_only(const std::string& path,
                                             bool adopt_empty,
                                             state_recovery recover,
                                             rocksdb::Env* env) {
  auto opts = make_options(true, env);
  auto listener
    = std::static_pointer_cast<detail::wal_damage_listener>(opts.info_log);
  rocksdb::DB* raw = nullptr;
  auto st = rocksdb::DB::OpenForReadOnly(opts, path, &raw);
  read_only_open out{db_ptr{raw}, {}, {}};
  if (!st.ok()) {
    auto damage = listener->damage();
    if (damage.empty())
      return refuse(path, "cannot open read-only", st);
    if (recover == state_recovery::strict)
      return refuse_damage(path, damage);
    // What RocksDB's point-in-time recovery opens, keylane opens; what it
    // drops is counted from the logs and this open (never by opening the
    // logs skipping damaged records: RocksDB fails some of those opens
    // with "Write batch content corrupted" where this one works).
    opts.wal_recovery_mode = rocksdb::WALRecoveryMode::kPointInTimeRecovery;
    st = rocksdb::DB::OpenForReadOnly(opts, path, &raw);
    out.db.reset(raw);
    if (!st.ok())
      return refuse(path, detail::describe(damage)
                            + "; point-in-time recovery cannot read it",
                    st);
    out.loss = detail::measure_wal_loss(path, *out.db);
    out.damage = std::move(damage);
  }
  // Recovered to before the first batch, a store is empty: its marker went
  // with the rest, and the writer's open adopts it as it adopts a store
  // whose first open stopped early. The preview must read it the same.
  if (auto known = identify(*out.db, path, adopt_empty || !out.damage.empty());
      !known)
    return std::move(known.error());
  return out;
}

} // namespace

caf::expected<std::unique_ptr<state_store>>
open_rocksdb_state_store(const std::string& path, bool read_only,
                         state_recovery recover, const log_writer& report) {
  return detail::open_rocksdb_state_store_on(nullptr, path, read_only, recover,
                                             report);
}

caf::expected<std::unique_ptr<state_store>>
detail::open_rocksdb_state_store_on(rocksdb::Env* env, const std::string& path,
                                    bool read_only, state_recovery recover,
                                    const log_writer& report) {
  auto where = inspect(path);
  if (!where)
    return std::move(where.error());
  switch (*where) {
    case place::missing:
      if (read_only)
        return refuse(path, "no such directory (no runtime has kept state"
                            " there, or the path is wrong)");
      break;
    case place::empty:
      if (read_only)
        return refuse(path, "not a keylane state store: the directory is"
                            " empty (no runtime has kept state there)");
      break;
    case place::other:
      return refuse(path, "not a keylane state store: a directory that is"
                          " not empty and holds no RocksDB database (no"
                          " CURRENT file); refusing to touch it");
    case place::database:
      if (auto err = check_column_families(path, env))
        return err;
      break;
  }
  db_ptr db;
  std::string recovered;
  if (read_only) {
    auto ro = open_read_only(path, false, recover, env);
    if (!ro)
      return std::move(ro.error());
    db = std::move(ro->db);
    if (!ro->damage.empty())
      recovered = detail::describe(ro->damage, ro->loss, true);
  } else {
    auto fresh = *where != place::database;
    if (fresh) {
      std::error_code ec;
      fs::create_directories(path, ec);
      if (ec)
        return refuse(path, "cannot create the directory: " + ec.message());
    } else {
      // Identified and its logs checked before opening for writing: a
      // writer's open would already change the directory (a new MANIFEST
      // and LOG, a flush of the log), another program's database or a
      // damaged store the operator must decide about.
      auto ro = open_read_only(path, true, recover, env);
      if (!ro)
        return std::move(ro.error());
      if (!ro->damage.empty())
        recovered = detail::describe(ro->damage, ro->loss, false);
    }
    auto opts = make_options(false, env);
    opts.create_if_missing = fresh;
    if (!recovered.empty())
      opts.wal_recovery_mode = rocksdb::WALRecoveryMode::kPointInTimeRecovery;
    rocksdb::DB* raw = nullptr;
    auto st = rocksdb::DB::Open(opts, path, &raw);
    db.reset(raw);
    if (!st.ok())
      return refuse(path, fresh ? "cannot create" : "cannot open", st);
    // Checked again under the lock the writer now holds: another process
    // may have created a database here since `inspect`.
    auto known = identify(*db, path, true);
    if (!known)
      return std::move(known.error());
    if (!*known) { // a new store, or one whose first open stopped early
      rocksdb::WriteOptions sync;
      sync.sync = true;
      st = db->Put(sync, slice(detail::state_format_key),
                   slice(detail::state_format_version));
      if (!st.ok())
        return refuse(path, "cannot write keylane's marker", st);
    }
  }
  if (!recovered.empty())
    (report ? report : stderr_log_writer())(log_level::warning,
                                            "state store " + path + ": "
                                              + recovered);
  std::unique_ptr<state_store> store
    = detail::make_rocksdb_state_store(path, std::move(db), read_only, env);
  return store;
}

} // namespace keylane

