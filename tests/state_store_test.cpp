// SPDX-License-Identifier: Apache-2.0
// Tests of the keyed-state stores and their record format: records round
// trip and every damage to their bytes is caught; one behavioural suite run
// against the memory and the RocksDB store; then what only the RocksDB
// store promises: it keeps data across a reopen and a kill, opens
// read-only beside a writer, and refuses directories that are not its own.
#include <catch2/catch.hpp>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <rocksdb/db.h>
#include <sys/wait.h>
#include <unistd.h>

#include "keylane/detail/state_record.hpp"
#include "keylane/errc.hpp"
#include "keylane/state_store.hpp"
#include "keylane/state_tool.hpp"

#include "child_process.hpp"
#include "temp_dir.hpp"

using namespace keylane;
using keylane::detail::decode_state_record;
using keylane::detail::encode_state_record;
using keylane::detail::kept_message;
using keylane::detail::state_record;
namespace fs = std::filesystem;
using test_support::child_pipe;
using test_support::child_process;
using test_support::child_spec;
using test_support::temp_dir;

namespace {

uint64_t test_seed() {
  if (auto* s = std::getenv("KEYLANE_SEED"))
    return std::strtoull(s, nullptr, 10);
  return std::random_device{}();
}

template <class T>
T get(caf::expected<T> x) {
  if (!x)
    FAIL(render(x.error()));
  return std::move(*x);
}

void ok(const caf::error& err) {
  if (err)
    FAIL(render(err));
}

/// The message of a failure that must be `errc::state_store_failed`.
template <class T>
std::string failure_of(const caf::expected<T>& x) {
  REQUIRE_FALSE(x);
  CHECK(x.error().code() == static_cast<uint8_t>(errc::state_store_failed));
  return render(x.error());
}

std::string failure_of(const caf::error& err) {
  REQUIRE(err);
  CHECK(err.code() == static_cast<uint8_t>(errc::state_store_failed));
  return render(err);
}

bool same(const state_record& x, const state_record& y) {
  auto same_outbox = [](const auto& a, const auto& b) {
    if (a.size() != b.size())
      return false;
    for (size_t i = 0; i < a.size(); ++i)
      if (a[i].to != b[i].to || a[i].number != b[i].number
          || a[i].due_ms != b[i].due_ms || a[i].payload != b[i].payload)
        return false;
    return true;
  };
  return x.events == y.events && x.origins == y.origins
         && x.taken_at_ms == y.taken_at_ms && x.state == y.state
         && x.sent == y.sent && same_outbox(x.outbox, y.outbox)
         && x.inbox == y.inbox;
}

std::string random_bytes(std::mt19937_64& rng, size_t n) {
  std::string s;
  for (size_t i = 0; i < n; ++i)
    s += static_cast<char>(rng());
  return s;
}

state_record random_record(std::mt19937_64& rng) {
  auto pick = [&](std::initializer_list<int64_t> edges) {
    if (rng() % 4 == 0)
      return *(edges.begin() + rng() % edges.size());
    return static_cast<int64_t>(rng()) >> (rng() % 64);
  };
  constexpr auto lo = std::numeric_limits<int64_t>::min();
  constexpr auto hi = std::numeric_limits<int64_t>::max();
  state_record r;
  r.events = rng() % 3 == 0 ? rng() : rng() % 1000;
  r.taken_at_ms = pick({0, -1, 1'714'564'800'123, lo, hi});
  for (auto n = rng() % 5; n > 0; --n)
    r.advance("s" + random_bytes(rng, rng() % 12), pick({-1, 0, lo, hi}));
  r.state = random_bytes(rng, rng() % 4 == 0 ? 0 : rng() % 400);
  if (rng() % 2 == 0) { // a key that sent or got messages
    auto any_key = [&]() -> key {
      if (rng() % 2 == 0)
        return key{rng() >> (rng() % 64)};
      return key{random_bytes(rng, rng() % 10)};
    };
    r.sent = rng() % 3 == 0 ? rng() : rng() % 1000;
    for (auto n = rng() % 4; n > 0; --n)
      r.outbox.push_back(kept_message{
        any_key(), rng() >> (rng() % 64),
        rng() % 2 == 0 ? 0 : static_cast<int64_t>(rng()) >> (rng() % 64),
        random_bytes(rng, rng() % 30)});
    for (auto n = rng() % 4; n > 0; --n)
      r.receive(any_key(), rng() >> (rng() % 64));
  }
  return r;
}

/// Header, `fields` and checksum, as an encoder that writes `fields`
/// verbatim would: lets a test build records that pass the checksum but
/// say impossible things.
std::string seal(const std::string& fields, char version = '\x01') {
  std::string out = "KLST";
  out += version;
  uint64_t size = 4 + 1 + 8 + fields.size() + 8;
  for (int i = 0; i < 8; ++i)
    out += static_cast<char>(size >> (8 * i));
  out += fields;
  auto sum = stable_hash(std::string_view{out});
  for (int i = 0; i < 8; ++i)
    out += static_cast<char>(sum >> (8 * i));
  return out;
}

/// The record's decode failure message.
std::string rejection(std::string_view bytes) {
  auto r = decode_state_record(bytes);
  return failure_of(r);
}

} // namespace

// -- the record ---------------------------------------------------------------

TEST_CASE("a state record comes back from its bytes exactly as it was",
          "[state][record]") {
  auto seed = test_seed();
  INFO("seed " << seed << " (rerun with KEYLANE_SEED=" << seed << ")");
  std::mt19937_64 rng{seed};
  CHECK(same(get(decode_state_record(encode_state_record({}))), {}));
  for (int i = 0; i < 2000; ++i) {
    auto r = random_record(rng);
    auto bytes = encode_state_record(r);
    INFO("record " << i << ": " << bytes.size() << " bytes");
    REQUIRE(same(get(decode_state_record(bytes)), r));
  }
}

TEST_CASE("a state record keeps one position per stream, -1 for none",
          "[state][record]") {
  state_record r;
  CHECK(r.position("orders/0") == -1);
  r.advance("orders/0", 41);
  r.advance("orders/1", 7);
  r.advance("orders/0", 42);
  CHECK(r.position("orders/0") == 42);
  CHECK(r.position("orders/1") == 7);
  CHECK(r.position("orders/2") == -1);
  REQUIRE(r.origins.size() == 2);
  CHECK(r.origins[0].first == "orders/0"); // first seen, first kept
}

TEST_CASE("a state record without messages keeps the first version's bytes",
          "[state][record][messaging]") {
  state_record r;
  r.events = 3;
  r.state = "abc";
  CHECK(encode_state_record(r)[4] == '\x01'); // readable by older builds
  r.receive(key{"a"}, 1);
  auto bytes = encode_state_record(r);
  CHECK(bytes[4] == '\x02');
  CHECK(same(get(decode_state_record(bytes)), r));
}

TEST_CASE("a state record keeps one number per sender, sorted, 0 for none",
          "[state][record][messaging]") {
  state_record r;
  CHECK(r.received(key{"b"}) == 0);
  r.receive(key{"b"}, 4);
  r.receive(key{uint64_t{9}}, 2);
  r.receive(key{"a"}, 7);
  r.receive(key{uint64_t{3}}, 1);
  r.receive(key{"b"}, 5);
  CHECK(r.received(key{"b"}) == 5);
  CHECK(r.received(key{"a"}) == 7);
  CHECK(r.received(key{uint64_t{9}}) == 2);
  CHECK(r.received(key{uint64_t{4}}) == 0);
  REQUIRE(r.inbox.size() == 4);
  CHECK(r.inbox[0].first == key{uint64_t{3}}); // integers first, by value
  CHECK(r.inbox[1].first == key{uint64_t{9}});
  CHECK(r.inbox[2].first == key{"a"});
  CHECK(r.inbox[3].first == key{"b"});
}

TEST_CASE("changing any one byte of a state record makes it fail to decode",
          "[state][record][corruption]") {
  auto seed = test_seed();
  INFO("seed " << seed << " (rerun with KEYLANE_SEED=" << seed << ")");
  std::mt19937_64 rng{seed};
  for (int round = 0; round < 20; ++round) {
    auto r = random_record(rng);
    auto bytes = encode_state_record(r);
    for (size_t i = 0; i < bytes.size(); ++i) {
      for (unsigned mask : {0xffu, 1u << (rng() % 8),
                            static_cast<unsigned>(1 + rng() % 255)}) {
        auto bad = bytes;
        bad[i] = static_cast<char>(bad[i] ^ mask);
        auto got = decode_state_record(bad);
        INFO("round " << round << ", byte " << i << " of " << bytes.size()
                      << " xor " << mask);
        // With the checksum a changed record never decodes; were it to,
        // it would have to be the same record.
        if (got) {
          CHECK(same(*got, r));
        } else {
          CHECK(got.error().code()
                == static_cast<uint8_t>(errc::state_store_failed));
        }
        CHECK_FALSE(got);
      }
    }
  }
}

TEST_CASE("a cut-short or extended state record fails to decode, saying so",
          "[state][record][corruption]") {
  std::mt19937_64 rng{test_seed()};
  auto bytes = encode_state_record(random_record(rng));
  for (size_t n = 0; n < bytes.size(); ++n) {
    INFO("the first " << n << " of " << bytes.size() << " bytes");
    auto msg = rejection(std::string_view{bytes}.substr(0, n));
    CHECK(msg.find("truncated") != std::string::npos);
  }
  CHECK_THAT(rejection(bytes + "x"),
             Catch::Contains("1 trailing byte after the"));
  CHECK_THAT(rejection(bytes + bytes), Catch::Contains("trailing bytes"));
}

TEST_CASE("a state record decode names what is wrong",
          "[state][record][corruption]") {
  auto bytes = encode_state_record({});
  auto with = [&](size_t at, char c) {
    auto b = bytes;
    b[at] = c;
    return b;
  };
  CHECK_THAT(rejection("garbage bytes, not a record"),
             Catch::Contains("bad magic") && Catch::Contains("KLST"));
  CHECK_THAT(rejection(with(4, '\x07')),
             Catch::Contains("unknown version 7")
               && Catch::Contains("reads version 1"));
  CHECK_THAT(rejection(with(bytes.size() - 1, 'x')),
             Catch::Contains("checksum mismatch"));
  CHECK_THAT(rejection(with(5, '\x02')),
             Catch::Contains("less than the smallest record"));
  CHECK_THAT(rejection(with(5, '\x7f')), Catch::Contains("truncated"));
  CHECK_THAT(rejection(std::string(25, '\0')), Catch::Contains("bad magic"));
}

TEST_CASE("a state record with a valid checksum but impossible fields is "
          "refused",
          "[state][record][corruption]") {
  // events 1, taken_at 0, no origins, then a state length far past the end.
  CHECK_THAT(rejection(seal(std::string("\x01\x00\x00\xff\xff\x03", 6))),
             Catch::Contains("state at offset 16: length 65535, but only 0"
                             " bytes remain"));
  // An origin count of 2^32 in five bytes.
  CHECK_THAT(rejection(seal(std::string("\x01\x00\x80\x80\x80\x80\x10\x00",
                                        8))),
             Catch::Contains("origin count 4294967296 cannot fit"));
  // Version 2: no state, sent 1, then an outbox count of 2^32; and one
  // message whose target is no key (an unknown kind byte).
  CHECK_THAT(rejection(seal(std::string("\x00\x00\x00\x00\x01\x80\x80\x80"
                                        "\x80\x10", 10), '\x02')),
             Catch::Contains("outbox count 4294967296 cannot fit"));
  CHECK_THAT(rejection(seal(std::string("\x00\x00\x00\x00\x01\x01\x02zq"
                                        "\x01\x00\x00", 12), '\x02')),
             Catch::Contains("outbox target") && Catch::Contains("no key"));
  // An 11-byte varint for events.
  CHECK_THAT(rejection(seal(std::string(10, '\xff') + std::string(4, '\0'))),
             Catch::Contains("events at offset 13: varint overflows 64 bits"));
  // A varint cut off by the end of the fields.
  CHECK_THAT(rejection(seal(std::string("\x01\x00\x00\x80", 4))),
             Catch::Contains("state at offset 16: runs past the end"));
  // Bytes left between the state and the checksum.
  CHECK_THAT(rejection(seal(std::string("\x01\x00\x00\x00zz", 6))),
             Catch::Contains("2 unread bytes between the state and the"
                             " checksum"));
  // The same fields without the extra bytes are a valid record.
  auto r = get(decode_state_record(seal(std::string("\x05\x03\x00\x02hi", 6))));
  CHECK(r.events == 5);
  CHECK(r.taken_at_ms == -2);
  CHECK(r.state == "hi");
}

// -- both stores --------------------------------------------------------------

namespace {

struct memory_fixture {
  std::unique_ptr<state_store> open() {
    return make_memory_state_store();
  }
};

struct rocksdb_fixture {
  temp_dir dir;
  std::string path = dir.sub("state");
  std::unique_ptr<state_store> open() {
    return get(open_rocksdb_state_store(path));
  }
};

std::optional<std::string> read_key(state_store& s, const key& k) {
  return get(s.read(k));
}

std::vector<std::pair<key, std::string>> scan_all(state_store& s) {
  std::vector<std::pair<key, std::string>> out;
  ok(s.scan([&](const key& k, std::string_view bytes) {
    out.emplace_back(k, std::string{bytes});
    return true;
  }));
  return out;
}

} // namespace

TEMPLATE_TEST_CASE("a state store reads back what was written, overwritten "
                   "and erased",
                   "[state][store]", memory_fixture, rocksdb_fixture) {
  TestType fx;
  auto store = fx.open();
  CHECK_FALSE(read_key(*store, "a"));
  ok(store->write({}, true));
  std::string odd("\0\x01\xff bytes", 9); // NUL and non-UTF-8 bytes
  ok(store->write({{"a", "one"}, {key{uint64_t{5}}, odd}}, false));
  CHECK(read_key(*store, "a") == "one");
  CHECK(read_key(*store, key{uint64_t{5}}) == odd);
  ok(store->write({{"a", "two"}}, true));
  CHECK(read_key(*store, "a") == "two");
  CHECK(get(store->erase("a")));
  CHECK_FALSE(get(store->erase("a")));
  CHECK_FALSE(read_key(*store, "a"));
  CHECK(read_key(*store, key{uint64_t{5}}) == odd);
  // A key twice in one batch: the later entry wins, as in a WriteBatch.
  ok(store->write({{"b", "first"}, {"b", "second"}}, false));
  CHECK(read_key(*store, "b") == "second");
  CHECK_FALSE(store->describe().empty());
}

TEMPLATE_TEST_CASE("integer and string keys never collide in a state store",
                   "[state][store]", memory_fixture, rocksdb_fixture) {
  TestType fx;
  auto store = fx.open();
  // The string whose bytes are the integer's big-endian encoding, too.
  std::string be7("\0\0\0\0\0\0\0\x07", 8);
  ok(store->write({{key{uint64_t{7}}, "int 7"},
                   {key{std::string{"7"}}, "string 7"},
                   {key{be7}, "string be7"},
                   {key{uint64_t{0}}, "int 0"},
                   {key{std::string{}}, "empty string"}},
                  true));
  CHECK(read_key(*store, key{uint64_t{7}}) == "int 7");
  CHECK(read_key(*store, key{std::string{"7"}}) == "string 7");
  CHECK(read_key(*store, key{be7}) == "string be7");
  CHECK(read_key(*store, key{uint64_t{0}}) == "int 0");
  CHECK(read_key(*store, key{std::string{}}) == "empty string");
  CHECK(scan_all(*store).size() == 5);
  CHECK(get(store->erase(key{std::string{"7"}})));
  CHECK(read_key(*store, key{uint64_t{7}}) == "int 7");
}

TEMPLATE_TEST_CASE("a state store scans integer keys in numeric order, then "
                   "string keys by their bytes, until told to stop",
                   "[state][store]", memory_fixture, rocksdb_fixture) {
  TestType fx;
  auto store = fx.open();
  std::vector<key> expected{key{uint64_t{1}},
                            key{uint64_t{2}},
                            key{uint64_t{256}},
                            key{uint64_t{1} << 40},
                            key{std::numeric_limits<uint64_t>::max()},
                            key{std::string{}},
                            key{std::string{"\x01"}},
                            key{std::string{"a"}},
                            key{std::string{"ab"}},
                            key{std::string{"b"}},
                            key{std::string{"\xff"}}};
  std::vector<state_entry> entries;
  for (auto i = expected.rbegin(); i != expected.rend(); ++i)
    entries.push_back({*i, "v" + i->to_string()});
  ok(store->write(entries, false));
  auto all = scan_all(*store);
  REQUIRE(all.size() == expected.size());
  for (size_t i = 0; i < expected.size(); ++i) {
    INFO("position " << i);
    CHECK(all[i].first == expected[i]);
    CHECK(all[i].second == "v" + expected[i].to_string());
  }
  size_t seen = 0;
  ok(store->scan([&](const key&, std::string_view) { return ++seen < 3; }));
  CHECK(seen == 3);
  // The callback may use the store: scan works on a snapshot.
  ok(store->scan([&](const key& k, std::string_view) {
    ok(store->write({{k, "changed"}}, false));
    return true;
  }));
  CHECK(read_key(*store, "a") == "changed");
}

// -- the RocksDB store --------------------------------------------------------

TEST_CASE("a RocksDB state store keeps its data across a reopen",
          "[state][rocksdb]") {
  rocksdb_fixture fx;
  auto store = fx.open();
  CHECK(store->describe() == "rocksdb at " + fx.path);
  ok(store->write({{"a", "1"}, {key{uint64_t{9}}, "2"}}, true));
  ok(store->write({{"b", "3"}}, false)); // in the WAL only
  store.reset();
  store = fx.open();
  CHECK(read_key(*store, "a") == "1");
  CHECK(read_key(*store, key{uint64_t{9}}) == "2");
  CHECK(read_key(*store, "b") == "3");
  CHECK(scan_all(*store).size() == 3); // the marker is not a key
}

TEST_CASE("a read-only RocksDB state store sees the data and refuses writes",
          "[state][rocksdb]") {
  rocksdb_fixture fx;
  ok(fx.open()->write({{"a", "1"}}, false));
  auto ro = get(open_rocksdb_state_store(fx.path, true));
  CHECK(ro->describe() == "rocksdb at " + fx.path + " (read-only)");
  CHECK(read_key(*ro, "a") == "1");
  CHECK(scan_all(*ro).size() == 1);
  CHECK_THAT(failure_of(ro->write({{"a", "2"}}, true)),
             Catch::Contains("opened read-only"));
  CHECK_THAT(failure_of(ro->erase("a")), Catch::Contains("opened read-only"));
  CHECK(read_key(*ro, "a") == "1");
}

TEST_CASE("a RocksDB state store opens read-only beside its writer and sees "
          "what was written before it opened",
          "[state][rocksdb]") {
  rocksdb_fixture fx;
  auto writer = fx.open();
  ok(writer->write({{"before", "1"}}, false));
  auto ro = get(open_rocksdb_state_store(fx.path, true));
  ok(writer->write({{"after", "2"}}, true));
  CHECK(read_key(*ro, "before") == "1");
  CHECK_FALSE(read_key(*ro, "after")); // a read-only open is a point in time
  // A second writer in this process is refused: RocksDB's lock.
  CHECK_THAT(failure_of(open_rocksdb_state_store(fx.path)),
             Catch::Contains(fx.path)
               && Catch::Contains("this process has the store open for"
                                  " writing already"));
}

namespace {
constexpr const char* store_holder_env = "KEYLANE_STATE_STORE_HOLDER";
} // namespace

// Run by the test below in a process of its own; nothing otherwise: holds
// the store open for writing until told to stop.
TEST_CASE("(the child process holding a RocksDB store open)",
          "[.state_store_holder_child]") {
  int ready = -1, release = -1;
  std::string path;
  if (!child_spec(store_holder_env, ready, release, path))
    return;
  auto store = open_rocksdb_state_store(path);
  if (!store || (*store)->write({{"b", "2"}}, true))
    _exit(3);
  char c = 1;
  if (write(ready, &c, 1) != 1 || read(release, &c, 1) < 0)
    _exit(4);
  _exit(0);
}

TEST_CASE("a RocksDB state store held by another process refuses a second "
          "writer and still opens read-only",
          "[state][rocksdb][process]") {
  rocksdb_fixture fx;
  ok(fx.open()->write({{"a", "1"}}, true));
  child_pipe ready, release;
  // Another process: in this one RocksDB refuses a second writer for
  // another reason (the test above).
  auto spec = std::to_string(ready.write_fd()) + " "
              + std::to_string(release.read_fd()) + " " + fx.path;
  auto child = child_process::test_case("[.state_store_holder_child]",
                                        store_holder_env, spec,
                                        {ready.read_fd(), release.write_fd()});
  REQUIRE(child.started());
  ready.close_write();
  release.close_read();
  char c = 0;
  REQUIRE(read(ready.read_fd(), &c, 1) == 1);
  CHECK_THAT(failure_of(open_rocksdb_state_store(fx.path)),
             Catch::Contains("another process has the store open for"
                             " writing"));
  {
    auto ro = get(open_rocksdb_state_store(fx.path, true));
    CHECK(read_key(*ro, "a") == "1");
    CHECK(read_key(*ro, "b") == "2"); // the writer's WAL, read as it stands
  }
  release.close_write();
  int status = child.wait();
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
}

namespace {

constexpr int crash_keys = 16;

/// The child: writes generation after generation of every key in one batch
/// each, until killed, acknowledging each generation on `fd`.
[[noreturn]] void crash_child(const std::string& path, int fd) {
  auto store = open_rocksdb_state_store(path);
  if (!store)
    _exit(3);
  std::mt19937_64 rng{42};
  for (uint64_t gen = 1;; ++gen) {
    std::vector<state_entry> batch;
    for (int k = 0; k < crash_keys; ++k) {
      state_record r;
      r.events = gen;
      r.state = std::string(rng() % 2000, 'x'); // some batches span pages
      batch.push_back({key{uint64_t(k)}, encode_state_record(r)});
    }
    if ((*store)->write(batch, gen % 8 == 0))
      _exit(4);
    if (write(fd, &gen, sizeof(gen)) != sizeof(gen))
      _exit(5);
  }
}

constexpr const char* store_crash_env = "KEYLANE_STATE_STORE_CRASH_CHILD";

} // namespace

// Run by the drill below in a process of its own; nothing otherwise.
TEST_CASE("(the child process of the RocksDB store kill drill)",
          "[.state_store_crash_child]") {
  int fd = -1;
  std::string path;
  if (!child_spec(store_crash_env, fd, path))
    return;
  crash_child(path, fd);
}

TEST_CASE("a RocksDB state store killed mid-write keeps every acknowledged "
          "batch whole and no part of another",
          "[state][rocksdb][crash]") {
  auto seed = test_seed();
  INFO("seed " << seed << " (rerun with KEYLANE_SEED=" << seed << ")");
  std::mt19937_64 rng{seed};
  for (int round = 0; round < 3; ++round) {
    INFO("round " << round);
    rocksdb_fixture fx;
    child_pipe acks;
    auto kill_after = 1 + rng() % 200;
    auto spec = std::to_string(acks.write_fd()) + " " + fx.path;
    auto child = child_process::test_case("[.state_store_crash_child]",
                                          store_crash_env, spec,
                                          {acks.read_fd()});
    REQUIRE(child.started());
    acks.close_write();
    uint64_t acked = 0;
    auto read_ack = [&](int timeout_ms) {
      return acks.read_records<uint64_t>(timeout_ms,
                                         [&](uint64_t gen) { acked = gen; });
    };
    while (acked < kill_after && read_ack(60'000)) {
    }
    std::this_thread::sleep_for(std::chrono::microseconds(rng() % 3000));
    child.kill_and_reap();
    while (read_ack(0)) {
    }
    acks.close_read();
    REQUIRE(acked >= kill_after);
    auto store = fx.open();
    std::set<uint64_t> gens;
    auto all = scan_all(*store);
    CHECK(all.size() == crash_keys);
    for (const auto& [k, bytes] : all)
      gens.insert(get(decode_state_record(bytes)).events);
    INFO("acknowledged up to generation " << acked);
    REQUIRE(gens.size() == 1); // one batch's generation in every key
    CHECK(*gens.begin() >= acked);
    CHECK(*gens.begin() <= acked + 1);
  }
}

TEST_CASE("a RocksDB state store refuses a path that is not its own",
          "[state][rocksdb]") {
  temp_dir dir;
  SECTION("a regular file") {
    std::ofstream{dir.sub("file")} << "text";
    CHECK_THAT(failure_of(open_rocksdb_state_store(dir.sub("file"))),
               Catch::Contains("not a directory"));
  }
  SECTION("a non-empty directory that is no database") {
    fs::create_directory(dir.sub("notes"));
    std::ofstream{dir.sub("notes/readme.txt")} << "mine";
    for (bool ro : {false, true})
      CHECK_THAT(failure_of(open_rocksdb_state_store(dir.sub("notes"), ro)),
                 Catch::Contains(dir.sub("notes"))
                   && Catch::Contains("not a keylane state store")
                   && Catch::Contains("no CURRENT file"));
    CHECK(std::distance(fs::directory_iterator{dir.sub("notes")},
                        fs::directory_iterator{})
          == 1);
  }
  SECTION("a missing or empty directory, read-only") {
    CHECK_THAT(failure_of(open_rocksdb_state_store(dir.sub("none"), true)),
               Catch::Contains("no such directory"));
    CHECK_FALSE(fs::exists(dir.sub("none")));
    fs::create_directory(dir.sub("empty"));
    CHECK_THAT(failure_of(open_rocksdb_state_store(dir.sub("empty"), true)),
               Catch::Contains("the directory is empty"));
    CHECK(fs::is_empty(dir.sub("empty")));
  }
}

namespace {

/// A RocksDB database written directly, as another program would.
void foreign_database(const std::string& path,
                      const std::vector<std::pair<std::string, std::string>>& kv,
                      const char* family = nullptr) {
  rocksdb::Options o;
  o.create_if_missing = true;
  rocksdb::DB* raw = nullptr;
  REQUIRE(rocksdb::DB::Open(o, path, &raw).ok());
  std::unique_ptr<rocksdb::DB> db{raw};
  for (const auto& [k, v] : kv)
    REQUIRE(db->Put({}, k, v).ok());
  if (family) {
    rocksdb::ColumnFamilyHandle* cf = nullptr;
    REQUIRE(db->CreateColumnFamily({}, family, &cf).ok());
    REQUIRE(db->DestroyColumnFamilyHandle(cf).ok());
  }
  REQUIRE(db->Close().ok());
}

std::set<std::string> files_of(const std::string& dir) {
  std::set<std::string> out;
  for (const auto& e : fs::directory_iterator{dir})
    out.insert(e.path().filename().string());
  return out;
}

} // namespace

TEST_CASE("a RocksDB state store refuses a database of another program and "
          "leaves it untouched",
          "[state][rocksdb]") {
  temp_dir dir;
  auto path = dir.sub("db");
  SECTION("without keylane's marker") {
    foreign_database(path, {{"user:1", "ann"}});
    auto before = files_of(path);
    for (bool ro : {false, true})
      CHECK_THAT(failure_of(open_rocksdb_state_store(path, ro)),
                 Catch::Contains(path)
                   && Catch::Contains("without keylane's marker"));
    CHECK(files_of(path) == before);
  }
  SECTION("with a column family of its own") {
    foreign_database(path, {}, "extra");
    CHECK_THAT(failure_of(open_rocksdb_state_store(path)),
               Catch::Contains("column families 'default', 'extra'"));
  }
  SECTION("of another format version") {
    foreign_database(path, {{std::string("\0keylane.state.format", 21), "2"}});
    CHECK_THAT(failure_of(open_rocksdb_state_store(path)),
               Catch::Contains("format '2', but this build reads format 1"));
  }
  SECTION("an empty one is adopted for writing, refused read-only") {
    foreign_database(path, {});
    CHECK_THAT(failure_of(open_rocksdb_state_store(path, true)),
               Catch::Contains("without keylane's marker"));
    ok(get(open_rocksdb_state_store(path))->write({{"a", "1"}}, true));
    CHECK(read_key(*get(open_rocksdb_state_store(path, true)), "a") == "1");
  }
}

TEST_CASE("a RocksDB state store's scan reports a key that is not keylane's",
          "[state][rocksdb]") {
  rocksdb_fixture fx;
  ok(fx.open()->write({{"a", "1"}}, true));
  foreign_database(fx.path, {{"zebra", "stripes"}});
  auto store = fx.open();
  CHECK(read_key(*store, "a") == "1");
  CHECK_THAT(failure_of(store->scan([](const key&, std::string_view) {
               return true;
             })),
             Catch::Contains("'7A65627261' (hex)") // "zebra"
               && Catch::Contains("not a keylane state key"));
}

// -- the state tool's renderer ------------------------------------------------

namespace state_tool_test {

struct account {
  std::string owner;
  int64_t cents = 0;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, account& x) {
  return f(caf::meta::type_name("account"), x.owner, x.cents);
}

std::string to_json(const account& a) {
  return "{\"owner\":\"" + a.owner + "\",\"cents\":" + std::to_string(a.cents)
         + "}";
}

} // namespace state_tool_test

TEST_CASE("json_renderer decodes a state with its codec and renders it with "
          "the type's to_json",
          "[state][tool]") {
  auto render_account = json_renderer<state_tool_test::account>();
  auto bytes = get(codec<state_tool_test::account>::encode({"ann", 1250}));
  CHECK(get(render_account(bytes)) == R"({"owner":"ann","cents":1250})");
  auto bad = render_account("\x01");
  REQUIRE_FALSE(bad);
  CHECK(bad.error().code() == static_cast<uint8_t>(errc::codec_failed));
}
