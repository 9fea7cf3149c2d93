// SPDX-License-Identifier: Apache-2.0
#pragma once

// The one place that names SQLite's C API types: an owning connection
// handle, a prepared statement that binds, steps and reads columns with
// keylane's types, and a write transaction that rolls back unless
// committed. Not thread-safe: the owner of a connection serialises every
// use of it, of its statements and of its transactions. Private to the
// library (not installed): its users need no SQLite headers.

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include <sqlite3.h>

namespace keylane::detail {

/// Closes a connection; `sqlite3_close_v2` defers the close until every
/// statement of it is finalized, so destruction order does not matter.
struct sqlite_db_closer {
  void operator()(sqlite3* db) const noexcept {
    sqlite3_close_v2(db);
  }
};

/// Owns one SQLite connection.
using sqlite_db = std::unique_ptr<sqlite3, sqlite_db_closer>;

/// Finalizes a prepared statement.
struct sqlite_stmt_finalizer {
  void operator()(sqlite3_stmt* stmt) const noexcept {
    sqlite3_finalize(stmt);
  }
};

/// One prepared statement of a connection, with 1-based binds and 0-based
/// columns as in SQLite. Every call returns SQLite's result code.
class sqlite_stmt {
public:
  /// Prepares `sql` on `db`; check `rc()` (SQLITE_OK) before use.
  sqlite_stmt(sqlite3* db, std::string_view sql) {
    sqlite3_stmt* raw = nullptr;
    rc_ = sqlite3_prepare_v2(db, sql.data(), static_cast<int>(sql.size()),
                             &raw, nullptr);
    stmt_.reset(raw);
  }

  /// The result of preparing the statement.
  [[nodiscard]] int rc() const noexcept {
    return rc_;
  }

  /// Binds a signed 64-bit integer.
  int bind(int i, int64_t x) noexcept {
    return sqlite3_bind_int64(stmt_.get(), i, x);
  }

  /// Binds an unsigned 64-bit integer by its bit pattern; `get_u64` reads
  /// it back unchanged.
  int bind_u64(int i, uint64_t x) noexcept {
    return bind(i, static_cast<int64_t>(x));
  }

  /// Binds text (copied; any bytes, no terminator needed).
  int bind_text(int i, std::string_view s) noexcept {
    return sqlite3_bind_text64(stmt_.get(), i, s.data(), s.size(),
                               SQLITE_TRANSIENT, SQLITE_UTF8);
  }

  /// Binds bytes as a BLOB (copied). An empty string stays an empty BLOB,
  /// never NULL: `std::string::data()` is never a null pointer.
  int bind_blob(int i, std::string_view s) noexcept {
    return sqlite3_bind_blob64(stmt_.get(), i, s.data(), s.size(),
                               SQLITE_TRANSIENT);
  }

  /// Runs one step: SQLITE_ROW, SQLITE_DONE or an error code.
  int step() noexcept {
    return sqlite3_step(stmt_.get());
  }

  /// Clears the last run's state so the statement can run again.
  void reset() noexcept {
    sqlite3_reset(stmt_.get());
    sqlite3_clear_bindings(stmt_.get());
  }

  /// Column `i` of the current row as a signed integer.
  [[nodiscard]] int64_t get_i64(int i) const noexcept {
    return sqlite3_column_int64(stmt_.get(), i);
  }

  /// Column `i` of the current row as an unsigned integer (bit pattern).
  [[nodiscard]] uint64_t get_u64(int i) const noexcept {
    return static_cast<uint64_t>(get_i64(i));
  }

  /// Column `i` of the current row as bytes (TEXT or BLOB, exactly).
  [[nodiscard]] std::string get_bytes(int i) const {
    // Ask for the pointer first, then the size: the documented safe order.
    auto* p = static_cast<const char*>(sqlite3_column_blob(stmt_.get(), i));
    auto n = sqlite3_column_bytes(stmt_.get(), i);
    return p != nullptr ? std::string(p, static_cast<size_t>(n))
                        : std::string{};
  }

private:
  std::unique_ptr<sqlite3_stmt, sqlite_stmt_finalizer> stmt_;
  int rc_ = SQLITE_OK;
};

/// Runs `sql`, one or more statements without results.
inline int sqlite_exec(sqlite3* db, const char* sql) noexcept {
  return sqlite3_exec(db, sql, nullptr, nullptr, nullptr);
}

/// A write transaction: BEGIN IMMEDIATE on construction (check `rc()`),
/// ROLLBACK on destruction unless `commit()` succeeded. Declare statements
/// after it, so they are finalized before it rolls back.
class sqlite_write_transaction {
public:
  explicit sqlite_write_transaction(sqlite3* db) noexcept
    : db_(db), rc_(sqlite_exec(db, "BEGIN IMMEDIATE")) {
  }

  sqlite_write_transaction(const sqlite_write_transaction&) = delete;
  sqlite_write_transaction& operator=(const sqlite_write_transaction&)
    = delete;

  ~sqlite_write_transaction() {
    // A failed COMMIT may leave the transaction open (SQLITE_BUSY) or may
    // have ended it already (I/O errors): ask before rolling back.
    if (rc_ == SQLITE_OK && !committed_ && sqlite3_get_autocommit(db_) == 0)
      sqlite_exec(db_, "ROLLBACK");
  }

  /// The result of BEGIN IMMEDIATE.
  [[nodiscard]] int rc() const noexcept {
    return rc_;
  }

  /// Commits; on failure the destructor rolls back.
  int commit() noexcept {
    auto rc = sqlite_exec(db_, "COMMIT");
    committed_ = rc == SQLITE_OK;
    return rc;
  }

private:
  sqlite3* db_;
  int rc_;
  bool committed_ = false;
};

} // namespace keylane::detail
