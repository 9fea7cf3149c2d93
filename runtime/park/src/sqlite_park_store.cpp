// SPDX-License-Identifier: Apache-2.0
// The durable park store's records: one SQLite file in WAL mode with
// synchronous=FULL, so a successful append has reached the disk when it
// returns. Opening and checking the file: sqlite_park_open.cpp.

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cstdint>
#include <limits>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "sqlite_park_store.hpp"
#include "keylane/errc.hpp"
#include "keylane/park_store.hpp"

namespace keylane {

namespace {

using detail::sqlite_db;
using detail::sqlite_exec;
using detail::sqlite_stmt;
using detail::sqlite_write_transaction;

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

} // namespace

std::unique_ptr<park_store> detail::make_sqlite_park_store(std::string path,
                                                           sqlite_db db) {
  return std::make_unique<sqlite_park_store>(std::move(path), std::move(db));
}

} // namespace keylane
