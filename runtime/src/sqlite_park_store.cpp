// SPDX-License-Identifier: Apache-2.0
// The durable park store: one SQLite file in WAL mode with synchronous=FULL,
// so a successful append has reached the disk when it returns.

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <limits>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "sqlite_handle.hpp"
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

int64_t to_ns(std::chrono::system_clock::time_point t) {
  using std::chrono::duration_cast;
  return duration_cast<std::chrono::nanoseconds>(t.time_since_epoch()).count();
}

std::chrono::system_clock::time_point from_ns(int64_t ns) {
  using std::chrono::duration_cast;
  return std::chrono::system_clock::time_point{
    duration_cast<std::chrono::system_clock::duration>(
      std::chrono::nanoseconds{ns})};
}

/// Binds `k` as key_kind at `i` and key_text at `i + 1`.
int bind_key(sqlite_stmt& st, int i, const key& k) {
  auto rc = st.bind(i, k.is_integer() ? 0 : 1);
  if (rc != SQLITE_OK)
    return rc;
  return st.bind_blob(i + 1, k.is_integer() ? std::to_string(k.integer())
                                            : k.str());
}

/// Reads the key stored as key_kind at column `i` and key_text at `i + 1`;
/// false when the integer text is corrupt.
bool read_key(const sqlite_stmt& st, int i, key& out) {
  auto text = st.get_bytes(i + 1);
  if (st.get_i64(i) != 0) {
    out = key{std::move(text)};
    return true;
  }
  uint64_t x = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), x);
  if (ec != std::errc{} || end != text.data() + text.size() || text.empty())
    return false;
  out = key{x};
  return true;
}

/// Thread-safe: one connection behind one mutex, so calls of this object
/// run one at a time. Each write runs in one BEGIN IMMEDIATE transaction
/// (all or nothing, durable on return); each read is a single statement,
/// which SQLite runs in one read transaction (a consistent snapshot) that
/// neither takes nor waits for the write lock. Other processes may use the
/// file at the same time; their writes wait for ours (busy timeout).
class sqlite_park_store final : public park_store {
public:
  sqlite_park_store(std::string path, sqlite_db db)
    : path_(std::move(path)), db_(std::move(db)) {
  }

  caf::expected<std::vector<uint64_t>>
  append(std::vector<parked_record> records) override {
    std::vector<uint64_t> ids;
    if (records.empty())
      return ids;
    ids.reserve(records.size());
    std::lock_guard<std::mutex> guard{mtx_};
    sqlite_write_transaction tx{db_.get()};
    sqlite_stmt st{db_.get(),
                   "INSERT INTO parked (seq, key_kind, key_text, payload,"
                   " reason, attempts, parked_at_ns)"
                   " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)"};
    int rc = tx.rc() != SQLITE_OK ? tx.rc() : st.rc();
    for (auto i = records.begin(); rc == SQLITE_OK && i != records.end();
         ++i) {
      st.reset();
      // A braced list runs the binds left to right; the first error wins.
      for (int bound : {st.bind_u64(1, i->seq), bind_key(st, 2, i->k),
                        st.bind_blob(4, i->payload),
                        st.bind_text(5, i->reason),
                        st.bind(6, int64_t{i->attempts}),
                        st.bind(7, to_ns(i->parked_at))})
        rc = rc != SQLITE_OK ? rc : bound;
      if (rc == SQLITE_OK && (rc = st.step()) == SQLITE_DONE) {
        rc = SQLITE_OK;
        ids.push_back(
          static_cast<uint64_t>(sqlite3_last_insert_rowid(db_.get())));
      }
    }
    if (rc == SQLITE_OK)
      rc = tx.commit();
    if (rc != SQLITE_OK)
      return failure("append", rc); // before `tx` rolls back
    return ids;
  }

  caf::expected<std::vector<parked_key>> keys() override {
    std::lock_guard<std::mutex> guard{mtx_};
    sqlite_stmt st{db_.get(),
                   "SELECT p.key_kind, p.key_text, c.n, p.reason,"
                   " p.parked_at_ns FROM (SELECT MIN(id) AS first_id,"
                   " COUNT(*) AS n FROM parked GROUP BY key_kind, key_text)"
                   " AS c JOIN parked AS p ON p.id = c.first_id"
                   " ORDER BY p.parked_at_ns, p.id"};
    std::vector<parked_key> out;
    int rc = st.rc();
    while (rc == SQLITE_OK && (rc = st.step()) == SQLITE_ROW) {
      parked_key pk;
      if (!read_key(st, 0, pk.k))
        return corrupt("keys");
      pk.count = st.get_u64(2);
      pk.first_reason = st.get_bytes(3);
      pk.parked_at = from_ns(st.get_i64(4));
      out.push_back(std::move(pk));
      rc = SQLITE_OK;
    }
    if (rc != SQLITE_DONE)
      return failure("keys", rc);
    return out;
  }

  caf::expected<std::vector<parked_record>> records(const key& k) override {
    std::lock_guard<std::mutex> guard{mtx_};
    sqlite_stmt st{db_.get(),
                   "SELECT id, seq, payload, reason, attempts, parked_at_ns"
                   " FROM parked WHERE key_kind = ?1 AND key_text = ?2"
                   " ORDER BY id"};
    std::vector<parked_record> out;
    int rc = st.rc() != SQLITE_OK ? st.rc() : bind_key(st, 1, k);
    while (rc == SQLITE_OK && (rc = st.step()) == SQLITE_ROW) {
      parked_record r;
      r.id = st.get_u64(0);
      r.seq = st.get_u64(1);
      r.k = k;
      r.payload = st.get_bytes(2);
      r.reason = st.get_bytes(3);
      r.attempts = static_cast<uint32_t>(st.get_i64(4));
      r.parked_at = from_ns(st.get_i64(5));
      out.push_back(std::move(r));
      rc = SQLITE_OK;
    }
    if (rc != SQLITE_DONE)
      return failure("records", rc);
    return out;
  }

  caf::expected<bool> is_parked(const key& k) override {
    std::lock_guard<std::mutex> guard{mtx_};
    sqlite_stmt st{db_.get(), "SELECT EXISTS (SELECT 1 FROM parked"
                              " WHERE key_kind = ?1 AND key_text = ?2)"};
    int rc = st.rc() != SQLITE_OK ? st.rc() : bind_key(st, 1, k);
    if (rc == SQLITE_OK && (rc = st.step()) == SQLITE_ROW)
      return st.get_i64(0) != 0;
    return failure("is_parked", rc);
  }

  caf::error restamp(const std::vector<parked_record>& records) override {
    if (records.empty())
      return caf::none;
    std::lock_guard<std::mutex> guard{mtx_};
    sqlite_write_transaction tx{db_.get()};
    sqlite_stmt st{db_.get(), "UPDATE parked SET seq = ?1, reason = ?2,"
                              " attempts = ?3, parked_at_ns = ?4"
                              " WHERE id = ?5"};
    int rc = tx.rc() != SQLITE_OK ? tx.rc() : st.rc();
    for (auto i = records.begin(); rc == SQLITE_OK && i != records.end();
         ++i) {
      st.reset();
      for (int bound : {st.bind_u64(1, i->seq), st.bind_text(2, i->reason),
                        st.bind(3, int64_t{i->attempts}),
                        st.bind(4, to_ns(i->parked_at)),
                        st.bind_u64(5, i->id)})
        rc = rc != SQLITE_OK ? rc : bound;
      if (rc == SQLITE_OK && (rc = st.step()) == SQLITE_DONE)
        rc = SQLITE_OK;
    }
    if (rc == SQLITE_OK)
      rc = tx.commit();
    if (rc != SQLITE_OK)
      return failure("restamp", rc);
    return caf::none;
  }

  caf::expected<uint64_t> remove_through(const key& k,
                                         uint64_t up_to_id) override {
    // Ids are positive int64 values: clamp so that "everything" (the
    // largest uint64) does not bind as a negative number.
    constexpr auto max_id = static_cast<uint64_t>(
      std::numeric_limits<int64_t>::max());
    return remove("remove_through", k, std::min(up_to_id, max_id));
  }

  caf::expected<uint64_t> discard(const key& k) override {
    return remove("discard", k, std::numeric_limits<int64_t>::max());
  }

private:
  caf::expected<uint64_t> remove(const char* what, const key& k,
                                 uint64_t up_to_id) {
    std::lock_guard<std::mutex> guard{mtx_};
    sqlite_write_transaction tx{db_.get()};
    sqlite_stmt st{db_.get(), "DELETE FROM parked WHERE key_kind = ?1"
                              " AND key_text = ?2 AND id <= ?3"};
    int rc = tx.rc() != SQLITE_OK ? tx.rc() : st.rc();
    if (rc == SQLITE_OK)
      rc = bind_key(st, 1, k);
    if (rc == SQLITE_OK)
      rc = st.bind_u64(3, up_to_id);
    uint64_t removed = 0;
    if (rc == SQLITE_OK && (rc = st.step()) == SQLITE_DONE) {
      removed = static_cast<uint64_t>(sqlite3_changes64(db_.get()));
      rc = tx.commit();
    }
    if (rc != SQLITE_OK)
      return failure(what, rc);
    return removed;
  }

  caf::error failure(const char* what, int rc) const {
    return make_error(errc::park_store_failed,
                      "park store " + path_ + ": " + what + " failed: "
                        + sqlite3_errmsg(db_.get()) + " (SQLite: "
                        + sqlite3_errstr(rc) + ")");
  }

  caf::error corrupt(const char* what) const {
    return make_error(errc::park_store_failed,
                      "park store " + path_ + ": " + what
                        + " failed: an integer key is stored as non-digits"
                          " (file corrupt or edited by hand)");
  }

  std::string path_;
  sqlite_db db_;
  std::mutex mtx_;
};

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
  std::unique_ptr<park_store> store
    = std::make_unique<sqlite_park_store>(path, std::move(db));
  return store;
}

} // namespace keylane
