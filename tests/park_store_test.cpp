// SPDX-License-Identifier: Apache-2.0
// Tests of the park stores: one behavioural suite run against the memory
// and the SQLite store, then what only the SQLite store promises: it finds
// everything after a reopen, refuses files that are not its own, and keeps
// every acknowledged append (and no partial one) when its process is killed.
#include <catch2/catch.hpp>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include <sqlite3.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "keylane/errc.hpp"
#include "keylane/park_store.hpp"
#include "keylane/runtime.hpp"

#include "child_process.hpp"
#include "temp_dir.hpp"

using namespace keylane;
using namespace std::chrono_literals;
namespace fs = std::filesystem;
using test_support::child_pipe;
using test_support::child_process;
using test_support::child_spec;
using test_support::temp_dir;

namespace {

struct memory_store {
  std::unique_ptr<park_store> open() {
    return make_memory_park_store();
  }
};

struct sqlite_store {
  temp_dir dir;
  std::string path = (dir.path / "park.db").string();
  std::unique_ptr<park_store> open() {
    auto store = open_sqlite_park_store(path);
    INFO(render(store ? caf::error{} : store.error()));
    REQUIRE(store);
    return std::move(*store);
  }
};

const auto t0 = std::chrono::system_clock::time_point{
  std::chrono::nanoseconds{1'714'564'800'123'456'789}}; // 2024-05-01, exact ns

parked_record rec(key k, uint64_t seq, std::string payload,
                  std::string reason = "key parked", uint32_t attempts = 0,
                  std::chrono::system_clock::time_point at = t0) {
  return parked_record{0, seq, std::move(k), std::move(payload),
                       std::move(reason), attempts, at, nullptr};
}

template <class T>
T get(caf::expected<T> x) {
  INFO(render(x ? caf::error{} : x.error()));
  REQUIRE(x);
  return std::move(*x);
}

std::vector<uint64_t> seqs(const std::vector<parked_record>& rs) {
  std::vector<uint64_t> out;
  for (const auto& r : rs)
    out.push_back(r.seq);
  return out;
}

std::string slurp(const std::string& path) {
  std::ifstream in{path, std::ios::binary};
  return std::string{std::istreambuf_iterator<char>{in}, {}};
}

uint64_t test_seed() {
  if (auto* s = std::getenv("KEYLANE_SEED"))
    return std::strtoull(s, nullptr, 10);
  return std::random_device{}();
}

} // namespace

TEMPLATE_TEST_CASE("a park store returns a key's records in append order "
                   "with increasing ids",
                   "[park]", memory_store, sqlite_store) {
  TestType fx;
  auto store = fx.open();
  CHECK(get(store->append({})).empty());
  std::string bytes("\0\x01\xff payload", 11); // NUL and non-UTF-8 bytes
  auto first = get(store->append({rec("a", 10, bytes, "boom", 3, t0),
                                  rec("b", 11, "x"),
                                  rec("a", 12, "", "key parked", 0,
                                      t0 + 1ns)}));
  auto second = get(store->append({rec("a", 13, "later")}));
  REQUIRE(first.size() == 3);
  REQUIRE(second.size() == 1);
  CHECK(std::is_sorted(first.begin(), first.end()));
  CHECK(std::adjacent_find(first.begin(), first.end()) == first.end());
  CHECK(second[0] > first[2]);
  auto a = get(store->records("a"));
  REQUIRE(a.size() == 3);
  CHECK(seqs(a) == std::vector<uint64_t>{10, 12, 13});
  CHECK(a[0].id == first[0]);
  CHECK(a[1].id == first[2]);
  CHECK(a[2].id == second[0]);
  CHECK(a[0].payload == bytes);
  CHECK(a[0].reason == "boom");
  CHECK(a[0].attempts == 3);
  CHECK(a[0].parked_at == t0);
  CHECK(a[0].k == key{"a"});
  CHECK(a[1].payload.empty());
  CHECK(a[1].parked_at == t0 + 1ns);
  CHECK(seqs(get(store->records("b"))) == std::vector<uint64_t>{11});
  CHECK(get(store->records("nobody")).empty());
}

TEMPLATE_TEST_CASE("keys() summarises each parked key by count, first reason "
                   "and first parked time, oldest first",
                   "[park]", memory_store, sqlite_store) {
  TestType fx;
  auto store = fx.open();
  CHECK(get(store->keys()).empty());
  get(store->append({rec("late", 1, "p", "timeout", 5, t0 + 2s),
                     rec("late", 2, "p", "key parked", 0, t0 + 3s),
                     rec(uint64_t{9}, 3, "p", "threw", 1, t0),
                     rec("tie", 4, "p", "tie", 1, t0)}));
  auto keys = get(store->keys());
  REQUIRE(keys.size() == 3);
  // 9 and "tie" were parked at the same time: the first appended goes first.
  CHECK(keys[0].k == key{uint64_t{9}});
  CHECK(keys[1].k == key{"tie"});
  CHECK(keys[2].k == key{"late"});
  CHECK(keys[2].count == 2);
  CHECK(keys[2].first_reason == "timeout");
  CHECK(keys[2].parked_at == t0 + 2s);
  CHECK(keys[0].count == 1);
  CHECK(keys[0].first_reason == "threw");
}

TEMPLATE_TEST_CASE("is_parked, remove_through and discard act on one key "
                   "and count what they removed",
                   "[park]", memory_store, sqlite_store) {
  TestType fx;
  auto store = fx.open();
  auto ids = get(store->append({rec("k", 1, "1"), rec("k", 2, "2"),
                                rec("other", 3, "3"), rec("k", 4, "4")}));
  CHECK(get(store->is_parked("k")));
  CHECK_FALSE(get(store->is_parked("nobody")));
  CHECK(get(store->remove_through("k", ids[1])) == 2);
  CHECK(seqs(get(store->records("k"))) == std::vector<uint64_t>{4});
  CHECK(get(store->remove_through("k", ids[1])) == 0);
  CHECK(get(store->remove_through("nobody", ids[3])) == 0);
  CHECK(get(store->keys()).size() == 2);
  CHECK(get(store->remove_through("k", std::numeric_limits<uint64_t>::max()))
        == 1);
  CHECK_FALSE(get(store->is_parked("k")));
  CHECK(get(store->keys()).size() == 1);
  CHECK(get(store->discard("k")) == 0);
  auto more = get(store->append({rec("other", 5, "5")}));
  CHECK(more[0] > ids[3]); // ids are never reused
  CHECK(get(store->discard("other")) == 2);
  CHECK_FALSE(get(store->is_parked("other")));
  CHECK(get(store->keys()).empty());
  auto after = get(store->append({rec("k", 6, "6")}));
  CHECK(after[0] > more[0]); // not even after the newest record is gone
}

TEMPLATE_TEST_CASE("an integer key and a string key with the same digits "
                   "stay distinct, and odd string keys round-trip",
                   "[park]", memory_store, sqlite_store) {
  TestType fx;
  auto store = fx.open();
  std::vector<key> ks{key{uint64_t{7}}, key{"7"}, key{std::string{}},
                      key{std::string("nul\0byte", 8)}, key{"\xff\xfe"},
                      key{std::numeric_limits<uint64_t>::max()}, key{0}};
  std::vector<parked_record> rs;
  for (size_t i = 0; i < ks.size(); ++i)
    rs.push_back(rec(ks[i], i, "p"));
  get(store->append(rs));
  for (size_t i = 0; i < ks.size(); ++i) {
    INFO("key #" << i);
    auto got = get(store->records(ks[i]));
    REQUIRE(got.size() == 1);
    CHECK(got[0].seq == i);
    CHECK(got[0].k == ks[i]);
  }
  auto keys = get(store->keys());
  REQUIRE(keys.size() == ks.size());
  for (size_t i = 0; i < ks.size(); ++i)
    CHECK(keys[i].k == ks[i]); // same time: append order
  CHECK(get(store->discard(key{uint64_t{7}})) == 1);
  CHECK(get(store->is_parked("7")));
  CHECK_FALSE(get(store->is_parked(key{"nul"})));
}

TEMPLATE_TEST_CASE("concurrent appends for different keys keep each key's "
                   "order",
                   "[park][race]", memory_store, sqlite_store) {
  TestType fx;
  auto store = fx.open();
  constexpr uint64_t threads = 4, keys_per_thread = 2, appends = 40;
  std::vector<std::thread> pool;
  std::vector<int> failures(threads, 0);
  for (uint64_t t = 0; t < threads; ++t)
    pool.emplace_back([&, t] {
      uint64_t seq = 0;
      for (uint64_t i = 0; i < appends; ++i) {
        key k = t * 100 + i % keys_per_thread; // integer keys, one thread each
        std::vector<parked_record> batch;
        for (uint64_t j = 0; j <= i % 3; ++j)
          batch.push_back(rec(k, seq++, std::to_string(t)));
        if (!store->append(std::move(batch)))
          ++failures[t];
      }
    });
  for (auto& th : pool)
    th.join();
  CHECK(failures == std::vector<int>(threads, 0));
  CHECK(get(store->keys()).size() == threads * keys_per_thread);
  for (uint64_t t = 0; t < threads; ++t) {
    std::vector<parked_record> mine;
    for (uint64_t k = 0; k < keys_per_thread; ++k) {
      auto rs = get(store->records(key{t * 100 + k}));
      CHECK(std::is_sorted(rs.begin(), rs.end(), [](auto& x, auto& y) {
        return x.id < y.id;
      }));
      auto s = seqs(rs);
      CHECK(std::is_sorted(s.begin(), s.end()));
      mine.insert(mine.end(), rs.begin(), rs.end());
    }
    CHECK(mine.size() == appends * 2 - 1); // 1, 2, 3, 1, ... per append
  }
}

TEST_CASE("an SQLite park store finds everything again after a reopen",
          "[park][sqlite]") {
  sqlite_store fx;
  std::vector<uint64_t> ids;
  {
    auto store = fx.open();
    ids = get(store->append({rec("a", 1, std::string("\0\1", 2), "boom", 2),
                             rec(uint64_t{7}, 2, "x"), rec("a", 3, "y")}));
    get(store->discard(key{uint64_t{7}}));
  }
  auto store = fx.open();
  auto a = get(store->records("a"));
  REQUIRE(a.size() == 2);
  CHECK(a[0].id == ids[0]);
  CHECK(a[0].payload == std::string("\0\1", 2));
  CHECK(a[0].reason == "boom");
  CHECK(a[0].attempts == 2);
  CHECK(a[0].parked_at == t0);
  CHECK(a[1].id == ids[2]);
  CHECK(get(store->keys()).size() == 1);
  CHECK(get(store->append({rec("b", 4, "z")}))[0] > ids[2]);
}

TEST_CASE("an SQLite park store refuses a file that is not its own and "
          "names it",
          "[park][sqlite]") {
  temp_dir dir;
  auto refused = [](const std::string& path, const std::string& why) {
    auto store = open_sqlite_park_store(path);
    REQUIRE_FALSE(store);
    auto msg = render(store.error());
    INFO(msg);
    CHECK(store.error().code()
          == static_cast<uint8_t>(errc::park_store_failed));
    CHECK(msg.find(path) != std::string::npos);
    CHECK(msg.find(why) != std::string::npos);
    CHECK_FALSE(fs::exists(path + "-wal")); // left untouched
  };
  SECTION("a text file") {
    auto path = (dir.path / "notes.txt").string();
    std::ofstream{path} << std::string(2000, 'x') << "\nnot a database\n";
    auto before = slurp(path);
    refused(path, "not an SQLite database");
    CHECK(slurp(path) == before);
  }
  SECTION("an SQLite file of another program") {
    auto path = (dir.path / "other.db").string();
    sqlite3* db = nullptr;
    REQUIRE(sqlite3_open(path.c_str(), &db) == SQLITE_OK);
    REQUIRE(sqlite3_exec(db, "CREATE TABLE users (name TEXT)", nullptr,
                         nullptr, nullptr) == SQLITE_OK);
    sqlite3_close(db);
    auto before = slurp(path);
    refused(path, "not a keylane park store");
    CHECK(slurp(path) == before);
  }
  SECTION("a park store of a newer schema version") {
    auto path = (dir.path / "park.db").string();
    REQUIRE(open_sqlite_park_store(path));
    sqlite3* db = nullptr;
    REQUIRE(sqlite3_open(path.c_str(), &db) == SQLITE_OK);
    REQUIRE(sqlite3_exec(db, "UPDATE keylane_meta SET value = '2' WHERE"
                             " name = 'schema_version'",
                         nullptr, nullptr, nullptr) == SQLITE_OK);
    sqlite3_close(db);
    auto store = open_sqlite_park_store(path);
    REQUIRE_FALSE(store);
    CHECK_THAT(render(store.error()), Catch::Contains(path)
                                        && Catch::Contains("schema version"));
  }
}

namespace {

/// A file's bytes and modification time, to prove nothing wrote it.
struct file_state {
  std::string bytes;
  struct timespec mtime{};
  explicit file_state(const std::string& path) : bytes(slurp(path)) {
    struct stat st{};
    REQUIRE(::stat(path.c_str(), &st) == 0);
    mtime = st.st_mtim;
  }
  bool operator==(const file_state& x) const {
    return bytes == x.bytes && mtime.tv_sec == x.mtime.tv_sec
           && mtime.tv_nsec == x.mtime.tv_nsec;
  }
};

bool no_side_files(const std::string& path) {
  return !fs::exists(path + "-wal") && !fs::exists(path + "-shm")
         && !fs::exists(path + "-journal");
}

constexpr const char* readonly_env = "KEYLANE_PARK_READONLY_CHILD";

/// Reads the store at `path` (written by the test below) opened read-only:
/// both keys and key a's records, and an append refused.
bool reads_read_only(const std::string& path) {
  auto store = open_sqlite_park_store(path, sqlite_access::read_only);
  if (!store)
    return false;
  auto keys = (*store)->keys();
  auto a = (*store)->records("a");
  auto written = (*store)->append({rec("b", 9, "w")});
  return keys && keys->size() == 2 && a && a->size() == 2
         && (*a)[1].payload == "z" && !written;
}

/// Runs `reads_read_only(path)` in a child process as the user nobody
/// (when we are root, who ignores permissions) or as ourselves; true when
/// it returned true.
bool as_other_user(const std::string& path) {
  auto child = child_process::test_case("[.park_readonly_child]",
                                        readonly_env, path, {});
  REQUIRE(child.started());
  int status = child.wait();
  INFO("child status " << status);
  return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

} // namespace

// Run by the test below in a process of its own; nothing otherwise.
TEST_CASE("(the child process reading a park store as another user)",
          "[.park_readonly_child]") {
  std::string path;
  if (!child_spec(readonly_env, path))
    return;
  if (geteuid() == 0 && (setgid(65534) != 0 || setuid(65534) != 0))
    _exit(3);
  _exit(reads_read_only(path) ? 0 : 1);
}

TEST_CASE("an SQLite park store opened read-only reads a read-only file in a "
          "read-only directory and changes no byte of it",
          "[park][sqlite][readonly]") {
  sqlite_store fx;
  {
    auto store = fx.open();
    get(store->append({rec("a", 1, "x"), rec(uint64_t{7}, 2, "y"),
                       rec("a", 3, "z")}));
  }
  REQUIRE(no_side_files(fx.path)); // closed cleanly: no log left
  fs::permissions(fx.path, fs::perms::owner_read | fs::perms::group_read
                             | fs::perms::others_read);
  fs::permissions(fx.dir.path, fs::perms::owner_read | fs::perms::owner_exec
                                 | fs::perms::group_read
                                 | fs::perms::group_exec
                                 | fs::perms::others_read
                                 | fs::perms::others_exec);
  file_state before{fx.path};
  INFO("as " << (geteuid() == 0 ? "nobody (we are root)" : "ourselves"));
  CHECK(as_other_user(fx.path));
  CHECK(reads_read_only(fx.path)); // and as ourselves, root included
  CHECK(file_state{fx.path} == before);
  CHECK(no_side_files(fx.path));
  fs::permissions(fx.dir.path, fs::perms::owner_all);
  fs::permissions(fx.path, fs::perms::owner_read | fs::perms::owner_write);
}

TEST_CASE("an SQLite park store opened read-only reads through the log of a "
          "runtime that has it open",
          "[park][sqlite][readonly]") {
  sqlite_store fx;
  auto writer = fx.open();
  get(writer->append({rec("a", 1, "x")}));
  REQUIRE(fs::exists(fx.path + "-wal"));
  auto reader = open_sqlite_park_store(fx.path, sqlite_access::read_only);
  INFO(render(reader ? caf::error{} : reader.error()));
  REQUIRE(reader);
  CHECK(get((*reader)->records("a")).size() == 1);
  get(writer->append({rec("a", 2, "y")}));
  CHECK(get((*reader)->records("a")).size() == 2);
}

TEST_CASE("an SQLite park store opened read-only or as existing refuses an "
          "empty file and leaves it empty",
          "[park][sqlite][readonly]") {
  temp_dir dir;
  auto path = (dir.path / "empty.db").string();
  std::ofstream{path}.close();
  for (auto access : {sqlite_access::read_only, sqlite_access::existing}) {
    auto store = open_sqlite_park_store(path, access);
    REQUIRE_FALSE(store);
    CHECK_THAT(render(store.error()),
               Catch::Contains(path) && Catch::Contains("the file is empty"));
    CHECK(fs::file_size(path) == 0);
    CHECK(no_side_files(path));
  }
  auto missing = (dir.path / "missing.db").string();
  CHECK_FALSE(open_sqlite_park_store(missing, sqlite_access::read_only));
  CHECK_FALSE(open_sqlite_park_store(missing, sqlite_access::existing));
  CHECK_FALSE(fs::exists(missing));
}

TEST_CASE("a damaged SQLite park store is reported in SQLite's words, not "
          "as a file of another program",
          "[park][sqlite]") {
  sqlite_store fx;
  get(fx.open()->append({rec("a", 1, "x")}));
  // Overwrite the root page of keylane_meta: SQLite's integrity check
  // calls such a file "malformed".
  sqlite3* db = nullptr;
  REQUIRE(sqlite3_open(fx.path.c_str(), &db) == SQLITE_OK);
  sqlite3_stmt* st = nullptr;
  REQUIRE(sqlite3_prepare_v2(db, "SELECT rootpage FROM sqlite_master WHERE"
                                 " name = 'keylane_meta'",
                             -1, &st, nullptr) == SQLITE_OK);
  REQUIRE(sqlite3_step(st) == SQLITE_ROW);
  auto page = sqlite3_column_int64(st, 0);
  sqlite3_finalize(st);
  sqlite3_close(db);
  REQUIRE(no_side_files(fx.path));
  {
    std::fstream f{fx.path, std::ios::in | std::ios::out | std::ios::binary};
    f.seekp((page - 1) * 4096);
    std::string junk(4096, '\xff');
    f.write(junk.data(), static_cast<std::streamsize>(junk.size()));
  }
  for (auto access : {sqlite_access::create, sqlite_access::read_only}) {
    auto store = open_sqlite_park_store(fx.path, access);
    REQUIRE_FALSE(store);
    auto msg = render(store.error());
    INFO(msg);
    CHECK(msg.find("malformed") != std::string::npos);
    CHECK(msg.find("another program") == std::string::npos);
  }
}

TEST_CASE("a runtime whose park.path cannot be opened says park_store_failed "
          "once, with the path",
          "[park][sqlite]") {
  temp_dir dir;
  settings s;
  s.order = order_mode::global; // the default before 0.2.0
  s.max_attempts = 1; // the default before 0.2.0
  s.threads = 1;
  s.park = park_mode::sqlite;
  s.park_path = (dir.path / "no-such-dir" / "park.db").string();
  struct echo : handler<std::string, std::string> {
    void on_event(std::string& x, completion<std::string> done) override {
      done.ok(x);
    }
  };
  handler_factory make = [](const handler_params&) {
    return std::make_unique<echo>();
  };
  auto rt = runtime<std::string, std::string>::start(s, make);
  REQUIRE_FALSE(rt);
  auto msg = render(rt.error());
  INFO(msg);
  CHECK(msg.find(s.park_path) != std::string::npos);
  CHECK(msg.rfind("park_store_failed: park store ", 0) == 0);
  CHECK(msg.find("park_store_failed", 1) == std::string::npos);
}

namespace {

// -- the crash test -----------------------------------------------------------

constexpr uint64_t max_batch = 6;

/// What the child reports after each acknowledged append: one write(2) of
/// less than PIPE_BUF bytes, so the parent never sees half of one.
struct ack {
  uint64_t batch;
  uint64_t size;
  uint64_t ids[max_batch];
};

/// Payload: batch, size, index, random filler, then a checksum of all that.
std::string crash_payload(uint64_t batch, uint64_t size, uint64_t index,
                          std::mt19937_64& rng) {
  std::string p;
  for (uint64_t x : {batch, size, index})
    p.append(reinterpret_cast<const char*>(&x), sizeof(x));
  for (auto n = rng() % 300; n > 0; --n)
    p += static_cast<char>(rng());
  auto sum = stable_hash(std::string_view{p});
  p.append(reinterpret_cast<const char*>(&sum), sizeof(sum));
  return p;
}

/// The 64-bit word at byte `offset` of `p`.
uint64_t word_at(const std::string& p, size_t offset) {
  uint64_t x = 0;
  std::memcpy(&x, p.data() + offset, sizeof(x));
  return x;
}

constexpr const char* crash_env = "KEYLANE_PARK_STORE_CRASH_CHILD";

/// The child: appends batches until killed, acknowledging each on `fd`.
/// Ends with _exit only: no Catch2 report, no destructors mid-append.
[[noreturn]] void crash_child(const std::string& path, int fd,
                              uint64_t first_batch, uint64_t seed) {
  auto store = open_sqlite_park_store(path);
  if (!store)
    _exit(3);
  std::mt19937_64 rng{seed};
  for (uint64_t b = first_batch;; ++b) {
    auto n = 1 + rng() % max_batch;
    key k = b % 2 == 0 ? key{b % 7} : key{"crash-" + std::to_string(b % 5)};
    std::vector<parked_record> rs;
    for (uint64_t i = 0; i < n; ++i)
      rs.push_back(rec(k, b, crash_payload(b, n, i, rng), "crash", 1));
    auto ids = (*store)->append(std::move(rs));
    if (!ids || ids->size() != n)
      _exit(4);
    ack a{b, n, {}};
    std::copy(ids->begin(), ids->end(), a.ids);
    if (write(fd, &a, sizeof(a)) != static_cast<ssize_t>(sizeof(a)))
      _exit(5);
  }
}

} // namespace

// Run by the crash test below in a process of its own; nothing otherwise.
TEST_CASE("(the child process of the SQLite park store crash test)",
          "[.park_store_crash_child]") {
  int fd = -1;
  uint64_t first_batch = 0, seed = 0;
  std::string path;
  if (!child_spec(crash_env, fd, first_batch, seed, path))
    return;
  crash_child(path, fd, first_batch, seed);
}

TEST_CASE("an SQLite park store killed mid-append keeps every acknowledged "
          "append and no partial one",
          "[park][sqlite][crash]") {
  auto seed = test_seed();
  INFO("seed " << seed << " (rerun with KEYLANE_SEED=" << seed << ")");
  std::mt19937_64 rng{seed};
  sqlite_store fx;
  std::map<uint64_t, ack> acked; // by batch
  for (uint64_t round = 0; round < 3; ++round) {
    INFO("round " << round);
    child_pipe acks;
    auto kill_after = 1 + rng() % 30;
    auto child_seed = rng();
    auto spec = std::to_string(acks.write_fd()) + " "
                + std::to_string((round + 1) * 1'000'000) + " "
                + std::to_string(child_seed) + " " + fx.path;
    auto child = child_process::test_case("[.park_store_crash_child]",
                                          crash_env, spec, {acks.read_fd()});
    REQUIRE(child.started());
    acks.close_write();
    uint64_t seen = 0;
    auto read_acks = [&](int timeout_ms) { // false on EOF or timeout
      return acks.read_records<ack>(timeout_ms, [&](const ack& a) {
        acked[a.batch] = a;
        ++seen;
      });
    };
    while (seen < kill_after && read_acks(60'000)) {
    }
    // Any moment: mid-transaction, mid-fsync, between appends.
    std::this_thread::sleep_for(std::chrono::microseconds(rng() % 3000));
    child.kill_and_reap();
    while (read_acks(0)) { // acks written before the kill landed
    }
    acks.close_read();
    CHECK(seen >= kill_after);
  }
  auto store = fx.open();
  std::map<uint64_t, std::vector<parked_record>> found; // by batch
  for (const auto& pk : get(store->keys())) {
    uint64_t last_batch = 0;
    for (auto& r : get(store->records(pk.k))) {
      REQUIRE(r.payload.size() >= 32);
      auto body = std::string_view{r.payload}.substr(0, r.payload.size() - 8);
      REQUIRE(stable_hash(body) == word_at(r.payload, body.size())); // intact
      CHECK(r.seq >= last_batch); // a key's batches in append order
      last_batch = r.seq;
      found[word_at(r.payload, 0)].push_back(std::move(r));
    }
  }
  for (const auto& [batch, rs] : found) {
    INFO("batch " << batch);
    REQUIRE(rs.size() == word_at(rs[0].payload, 8)); // complete
    for (uint64_t i = 0; i < rs.size(); ++i) {
      CHECK(word_at(rs[i].payload, 16) == i);
      CHECK(rs[i].seq == batch);
      CHECK(rs[i].k == rs[0].k);
    }
  }
  for (const auto& [batch, a] : acked) {
    INFO("acknowledged batch " << batch);
    auto it = found.find(batch);
    REQUIRE(it != found.end());
    REQUIRE(it->second.size() == a.size);
    for (uint64_t i = 0; i < a.size; ++i)
      CHECK(it->second[i].id == a.ids[i]);
  }
  CHECK(found.size() >= acked.size());
}
