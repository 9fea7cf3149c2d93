// SPDX-License-Identifier: Apache-2.0
#pragma once
// The RocksDB state store opened on a RocksDB `Env` of the caller's: the
// hook through which the disk-fault tests make its writes fail (a full
// disk, an I/O error) and come back. Programs use
// `open_rocksdb_state_store`; this header names RocksDB's `Env` only by a
// declaration, so including it needs no RocksDB headers.

#include <memory>
#include <string>

#include <caf/expected.hpp>

#include "keylane/config.hpp"
#include "keylane/log.hpp"
#include "keylane/state_store.hpp"

namespace rocksdb {
class Env;
} // namespace rocksdb

namespace keylane::detail {

/// `open_rocksdb_state_store(path, read_only, recover, report)`, with every
/// file of the store (its reopens after a failed write included) read and
/// written through `env`, which must outlive the store. A null `env` is
/// RocksDB's default, as in `open_rocksdb_state_store`.
[[nodiscard]] caf::expected<std::unique_ptr<state_store>>
open_rocksdb_state_store_on(rocksdb::Env* env, const std::string& path,
                            bool read_only = false,
                            state_recovery recover = state_recovery::strict,
                            const log_writer& report = {});

} // namespace keylane::detail
