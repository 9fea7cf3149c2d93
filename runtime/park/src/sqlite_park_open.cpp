// SPDX-License-Identifier: Apache-2.0
// Opening the durable park store: its file identified before anything is
// written, switched to WAL, its schema created in a new file.

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <system_error>

#include "sqlite_park_store.hpp"
#include "keylane/errc.hpp"
#include "keylane/park_store.hpp"

namespace keylane {

namespace {

using detail::sqlite_db;
using detail::sqlite_exec;
using detail::sqlite_stmt;
using detail::sqlite_write_transaction;

/// What `keylane_meta` must say for us to touch a file.
constexpr const char* format_name = "keylane park store";
constexpr int64_t schema_version = 1;

// key_text is a BLOB so that every string key, NUL bytes and invalid UTF-8
// included, compares and round-trips byte for byte; integer keys are stored
// in decimal with key_kind 0, so the integer 7 and the string "7" differ.
// AUTOINCREMENT: ids are never reused, also after the newest record is gone.
// The meta rows must match `format_name` and `schema_version`.
constexpr const char* schema_sql = R"sql(
CREATE TABLE keylane_meta (
  name  TEXT PRIMARY KEY NOT NULL,
  value TEXT NOT NULL
);
CREATE TABLE parked (
  id           INTEGER PRIMARY KEY AUTOINCREMENT,
  seq          INTEGER NOT NULL,
  key_kind     INTEGER NOT NULL CHECK (key_kind IN (0, 1)),
  key_text     BLOB NOT NULL,
  payload      BLOB NOT NULL,
  reason       TEXT NOT NULL,
  attempts     INTEGER NOT NULL,
  parked_at_ns INTEGER NOT NULL
);
CREATE INDEX parked_by_key ON parked (key_kind, key_text, id);
INSERT INTO keylane_meta (name, value) VALUES
  ('format', 'keylane park store'), ('schema_version', '1');
)sql";

caf::error refuse(const std::string& path, const std::string& why) {
  return make_error(errc::park_store_failed,
                    "park store " + path + ": " + why);
}

// What SQLite said about the last call on `db`, with the code's own text
// when the message is only the generic one.
std::string sqlite_says(sqlite3* db, int rc) {
  std::string msg = sqlite3_errmsg(db);
  std::string code = sqlite3_errstr(rc);
  return msg == code ? msg : msg + " (SQLite: " + code + ")";
}

// Reads the file's identity without writing to it: true when it is a
// keylane park store of our schema version, false when it is a new (empty)
// database, an error when it is anything else. A file SQLite cannot read
// (damaged, locked, unreadable) is reported in SQLite's words, never taken
// for another program's file.
caf::expected<bool> identify(sqlite3* db, const std::string& path) {
  sqlite_stmt tables{db, "SELECT count(*), count(CASE WHEN type = 'table'"
                         " AND name = 'keylane_meta' THEN 1 END)"
                         " FROM sqlite_master"};
  auto rc = tables.rc() != SQLITE_OK ? tables.rc() : tables.step();
  if ((rc & 0xff) == SQLITE_NOTADB)
    return refuse(path, "not a keylane park store: the file is not an"
                        " SQLite database");
  if (rc != SQLITE_ROW)
    return refuse(path, "cannot read: " + sqlite_says(db, rc));
  if (tables.get_i64(0) == 0)
    return false;
  if (tables.get_i64(1) == 0)
    return refuse(path, "not a keylane park store: an SQLite database"
                        " without keylane's meta table (a file of another"
                        " program?); refusing to touch it");
  sqlite_stmt meta{db, "SELECT (SELECT value FROM keylane_meta WHERE name ="
                       " 'format'), (SELECT value FROM keylane_meta WHERE"
                       " name = 'schema_version')"};
  rc = meta.rc() != SQLITE_OK ? meta.rc() : meta.step();
  if (rc != SQLITE_ROW)
    return refuse(path, "cannot read keylane's meta table: "
                          + sqlite_says(db, rc));
  if (meta.get_bytes(0) != format_name)
    return refuse(path, "not a keylane park store: its meta table names"
                        " the format '" + meta.get_bytes(0)
                          + "'; refusing to touch it");
  auto version = meta.get_bytes(1);
  if (version != std::to_string(schema_version))
    return refuse(path, "keylane park store of schema version '" + version
                          + "', but this build reads version "
                          + std::to_string(schema_version)
                          + "; use a matching keylane-park");
  return true;
}

caf::error refuse_empty(const std::string& path) {
  return refuse(path, "not a keylane park store: the file is empty (no"
                      " runtime has parked events there); left as it is");
}

// Identifies the file, switches it to WAL and creates the schema in a new
// file. Checks before writing, so a foreign file is left untouched.
caf::error prepare(sqlite3* db, const std::string& path,
                   sqlite_access access) {
  auto known = identify(db, path);
  if (!known)
    return std::move(known.error());
  if (access == sqlite_access::read_only)
    return *known ? caf::none : refuse_empty(path);
  auto fail = [&](const char* step) {
    return refuse(path, std::string{"cannot "} + step + ": "
                          + sqlite3_errmsg(db));
  };
  if (!*known && access == sqlite_access::existing)
    return refuse_empty(path);
  {
    sqlite_stmt wal{db, "PRAGMA journal_mode = WAL"};
    if (wal.rc() != SQLITE_OK || wal.step() != SQLITE_ROW)
      return fail("switch to WAL journal mode");
    if (auto mode = wal.get_bytes(0); mode != "wal")
      return refuse(path, "cannot switch to WAL journal mode (SQLite kept '"
                            + mode + "'); use a file on a local disk");
  }
  if (sqlite_exec(db, "PRAGMA synchronous = FULL") != SQLITE_OK)
    return fail("set synchronous = FULL");
  if (*known)
    return caf::none;
  // A new file: create the schema, unless another process just did.
  sqlite_write_transaction tx{db};
  if (tx.rc() != SQLITE_OK)
    return fail("begin creating the schema");
  known = identify(db, path);
  if (!known)
    return std::move(known.error());
  if (!*known && sqlite_exec(db, schema_sql) != SQLITE_OK)
    return fail("create the schema");
  if (tx.commit() != SQLITE_OK)
    return fail("commit the schema");
  return caf::none;
}

// `path` as an SQLite URI ("file:" and percent escapes), with `query`.
std::string file_uri(const std::string& path, const char* query) {
  static constexpr char hex[] = "0123456789ABCDEF";
  std::string out = "file:";
  for (unsigned char c : path) {
    bool plain = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')
                 || (c >= '0' && c <= '9') || c == '/' || c == '.'
                 || c == '-' || c == '_' || c == '~';
    if (plain) {
      out += static_cast<char>(c);
    } else {
      out += '%';
      out += hex[c >> 4];
      out += hex[c & 0xf];
    }
  }
  return out + "?" + query;
}

bool has_wal(const std::string& path) {
  std::error_code ec;
  auto wal = std::filesystem::status(path + "-wal", ec);
  return std::filesystem::exists(wal);
}

} // namespace


caf::expected<std::unique_ptr<park_store>>
open_sqlite_park_store(const std::string& path, sqlite_access access) {
  // Read-only: a store with no write-ahead log holds everything in its
  // main file and no runtime has it open (a runtime's connection keeps the
  // log), so read it as immutable: no -shm or -wal is created, no lock
  // taken, which also works in a directory the caller cannot write. With a
  // log, read through it as any reader does (its -shm exists already).
  auto ro = access == sqlite_access::read_only;
  auto immutable = ro && !has_wal(path);
  auto name = immutable ? file_uri(path, "immutable=1") : path;
  int flags = SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_URI;
  flags |= ro ? SQLITE_OPEN_READONLY
              : access == sqlite_access::existing
                ? SQLITE_OPEN_READWRITE
                : SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE;
  if (!immutable)
    flags &= ~SQLITE_OPEN_URI; // a plain path, whatever it contains
  sqlite3* raw = nullptr;
  auto rc = sqlite3_open_v2(name.c_str(), &raw, flags, nullptr);
  sqlite_db db{raw}; // open_v2 hands out a handle even on failure
  if (rc != SQLITE_OK)
    return make_error(errc::park_store_failed,
                      "park store " + path + ": cannot open: "
                        + (raw ? sqlite3_errmsg(raw) : sqlite3_errstr(rc)));
  sqlite3_extended_result_codes(db.get(), 1);
  sqlite3_busy_timeout(db.get(), 10'000); // another process may hold the lock
  if (auto err = prepare(db.get(), path, access))
    return err;
  return detail::make_sqlite_park_store(path, std::move(db));
}

} // namespace keylane
