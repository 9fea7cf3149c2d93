// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <caf/error.hpp>
#include <caf/expected.hpp>

#include "keylane/config.hpp"
#include "keylane/key.hpp"
#include "keylane/log.hpp"

namespace keylane {

/// One key's stored state as a store keeps it: the bytes of a
/// `detail::state_record` (the state's codec bytes plus what keylane keeps
/// beside them), opaque to the store.
struct state_entry {
  keylane::key k;
  std::string bytes;
};

/// Where keyed state lives between a key's lanes and across restarts.
/// Implementations are thread-safe. `write` is atomic: after a crash either
/// every entry of the call is stored or none is, and no entry is ever torn;
/// with `sync` it is also durable (on disk, fsynced) when it returns success.
class state_store {
public:
  virtual ~state_store() = default;

  /// The bytes stored for `k`; nullopt when the key has none.
  [[nodiscard]] virtual caf::expected<std::optional<std::string>>
  read(const key& k) = 0;

  /// Stores every entry of `entries` in one atomic batch, replacing what
  /// each key had.
  [[nodiscard]] virtual caf::error write(const std::vector<state_entry>& entries,
                                         bool sync) = 0;

  /// Removes the state of `k` (an operator's reset); true if it had one.
  [[nodiscard]] virtual caf::expected<bool> erase(const key& k) = 0;

  /// Calls `fn` for every stored key in the store's order, until it
  /// returns false. Both stores list integer keys first, by value, then
  /// string keys by their bytes, and scan a snapshot taken when the call
  /// starts: `fn` may call the store, and sees none of its changes here.
  [[nodiscard]] virtual caf::error
  scan(const std::function<bool(const key&, std::string_view bytes)>& fn) = 0;

  /// What and where the store is, for messages ("rocksdb at /var/x").
  [[nodiscard]] virtual std::string describe() const = 0;
};

/// A store in memory: state survives a key's retire and `stop()`, not the
/// process. `write`'s `sync` changes nothing here.
[[nodiscard]] std::unique_ptr<state_store> make_memory_state_store();

/// A RocksDB database in the directory `path` (created if missing unless
/// `read_only`). Fails with `errc::state_store_failed` and RocksDB's own
/// words if it cannot be opened (another process holds its lock, a corrupt
/// file) or is not a keylane state store.
///
/// A new store is marked as keylane's (a reserved entry); a database
/// without that mark, with column families of its own, or a non-empty
/// directory that is no RocksDB database is refused and left untouched.
/// Writes go through RocksDB's write-ahead log: after a process crash every
/// successful `write` is there, and after a power loss every `sync` one.
///
/// A write-ahead log damaged before its end (a byte changed inside a
/// record) is refused with a message that names the file, and the directory
/// is left as it was: reading the log only up to the damage, RocksDB's
/// default, would hand keys older states that nothing tells from current
/// ones. A log cut off inside its last record, as a crash mid-write leaves
/// it, is no damage and opens. With `recover` = `point_in_time` a damaged
/// log is read up to the damage and the rest is dropped (for good, unless
/// `read_only`); `report` gets one warning saying which file and how many
/// key writes and keys that dropped (stderr without one).
///
/// Only one process may open a store for writing: a running runtime holds
/// RocksDB's lock, and a second writer is refused with a message that says
/// so. `read_only` (RocksDB's OpenForReadOnly) takes no lock and writes no
/// file, so it also works on a directory the caller cannot write and
/// beside a running writer: it sees what the writer had written when it
/// opened (the write-ahead log included), nothing later. RocksDB calls
/// such an open beside a writer undefined and promises only that it
/// "can often succeed if quickly closed": it worked in every one of 300
/// opens during a write load with flushes and compactions, but keep such
/// readers short-lived (as keylane-state is) and retry one that fails.
/// Its `write` and `erase` fail.
[[nodiscard]] caf::expected<std::unique_ptr<state_store>>
open_rocksdb_state_store(const std::string& path, bool read_only = false,
                         state_recovery recover = state_recovery::strict,
                         const log_writer& report = {});

} // namespace keylane
