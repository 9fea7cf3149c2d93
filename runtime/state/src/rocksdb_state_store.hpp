// SPDX-License-Identifier: Apache-2.0
#pragma once
// The RocksDB state store's parts, shared by its records
// (rocksdb_state_store.cpp) and its opening (rocksdb_state_open.cpp).

#include <memory>
#include <string>
#include <string_view>

#include <rocksdb/db.h>
#include <rocksdb/env.h>
#include <rocksdb/options.h>
#include <rocksdb/slice.h>
#include <rocksdb/status.h>

#include "keylane/errc.hpp"
#include "keylane/state_store.hpp"

namespace keylane::detail {

using db_ptr = std::unique_ptr<rocksdb::DB>;

inline rocksdb::Slice slice(std::string_view s) {
  return {s.data(), s.size()};
}

/// `errc::state_store_failed`, naming the store and what failed.
caf::error refuse(const std::string& path, const std::string& what);
/// The same with RocksDB's status, explained where it is a held lock.
caf::error refuse(const std::string& path, const std::string& what,
                  const rocksdb::Status& st);

/// RocksDB's options for a store: for a read-only open or the writer's,
/// on `env` (null: RocksDB's default).
[[nodiscard]] rocksdb::Options make_options(bool read_only, rocksdb::Env* env);

/// The store on `db`, opened and checked by `open_rocksdb_state_store`
/// through `env` (null: RocksDB's default), which reopens it after a
/// failed write.
[[nodiscard]] std::unique_ptr<state_store>
make_rocksdb_state_store(std::string path, db_ptr db, bool read_only,
                         rocksdb::Env* env);

} // namespace keylane::detail
