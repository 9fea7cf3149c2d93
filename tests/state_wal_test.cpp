// SPDX-License-Identifier: Apache-2.0
// A RocksDB state store's write-ahead log, damaged: one flipped byte inside
// the log must stop the open, name the file and change nothing (RocksDB's
// default, point-in-time recovery, would drop everything after the damage
// and hand back older states that are valid folds, so nobody could tell);
// a log cut short, as a crash mid-write leaves it, must still open; and the
// operator's way forward, state.recover = "point_in_time", must recover to
// the damage and say what it dropped.
#include <catch2/catch.hpp>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "keylane/detail/state_record.hpp"
#include "keylane/errc.hpp"
#include "keylane/runtime.hpp"
#include "keylane/state_store.hpp"

#include "state_support.hpp"
#include "temp_dir.hpp"

using namespace keylane;
namespace fs = std::filesystem;
using test_support::temp_dir;

namespace {

constexpr uint64_t wal_keys = 2000;
constexpr uint64_t wal_rounds = 10;

/// Every file of the directory and its bytes.
std::map<std::string, std::string> contents_of(const std::string& dir) {
  std::map<std::string, std::string> out;
  for (const auto& e : fs::directory_iterator{dir}) {
    std::ifstream in{e.path(), std::ios::binary};
    out[e.path().filename().string()]
      = std::string{std::istreambuf_iterator<char>{in}, {}};
  }
  return out;
}

/// The names of the files `now` adds, drops or changes against `then`.
std::string changes(const std::map<std::string, std::string>& then,
                    const std::map<std::string, std::string>& now) {
  std::string out;
  for (const auto& [name, bytes] : now)
    if (auto i = then.find(name); i == then.end() || i->second != bytes)
      out += " " + name + (i == then.end() ? " (new)" : " (changed)");
  for (const auto& [name, bytes] : then)
    if (now.count(name) == 0)
      out += " " + name + " (gone)";
  return out;
}

/// Writes `wal_rounds` rounds of every key, round r as the record of r
/// events, unsynced: a store that is only ever closed keeps all of it in
/// its log (RocksDB flushes the memtable on open, not on close).
void write_rounds(const std::string& path) {
  auto store = open_rocksdb_state_store(path);
  REQUIRE(store);
  for (uint64_t r = 1; r <= wal_rounds; ++r)
    for (uint64_t first = 0; first < wal_keys; first += 100) {
      std::vector<state_entry> batch;
      for (uint64_t k = first; k < first + 100; ++k) {
        detail::state_record rec;
        rec.events = r;
        rec.state = std::string(24, static_cast<char>('a' + k % 26));
        batch.push_back({key{k}, encode_state_record(rec)});
      }
      REQUIRE_FALSE((*store)->write(batch, false));
    }
}

/// The store's write-ahead log: the one `*.log` file that holds the rounds.
std::string the_log(const std::string& path) {
  std::string log;
  uintmax_t largest = 0;
  for (const auto& e : fs::directory_iterator{path})
    if (e.path().extension() == ".log" && e.file_size() > largest) {
      largest = e.file_size();
      log = e.path().string();
    }
  // Far more than RocksDB's 32 KiB log block: the middle is not the tail.
  REQUIRE(largest > 512 * 1024);
  return log;
}

void flip_byte(const std::string& file, uintmax_t at) {
  std::fstream f{file, std::ios::in | std::ios::out | std::ios::binary};
  REQUIRE(f);
  f.seekg(static_cast<std::streamoff>(at));
  char c = 0;
  REQUIRE(f.get(c));
  f.seekp(static_cast<std::streamoff>(at));
  REQUIRE(f.put(static_cast<char>(c ^ 0x10)));
}

/// How the store's keys stand against the last round: "N of 2000 keys at
/// the last round, M at an older one, L missing".
std::string standing(state_store& s) {
  uint64_t last = 0, older = 0, seen = 0;
  auto err = s.scan([&](const key&, std::string_view bytes) {
    ++seen;
    auto rec = detail::decode_state_record(bytes);
    if (rec && rec->events == wal_rounds)
      ++last;
    else
      ++older;
    return true;
  });
  if (err)
    return render(err);
  return std::to_string(last) + " of " + std::to_string(wal_keys)
         + " keys at the last round, " + std::to_string(older)
         + " at an older one, " + std::to_string(wal_keys - seen)
         + " missing";
}

/// A store written with every round whose log then had a byte flipped in
/// its middle: where it is, its log, and every file's bytes as damaged.
struct damaged_store {
  temp_dir dir;
  std::string path = dir.sub("state");
  std::string log;
  std::map<std::string, std::string> damaged;

  damaged_store() {
    write_rounds(path);
    log = the_log(path);
    flip_byte(log, fs::file_size(log) / 2);
    damaged = contents_of(path);
  }
};

} // namespace

TEST_CASE("a RocksDB state store refuses a write-ahead log damaged in the "
          "middle, names the file and changes nothing",
          "[state][rocksdb][wal]") {
  damaged_store d;
  const auto& path = d.path;
  const auto& log = d.log;
  const auto& damaged = d.damaged;
  for (bool read_only : {false, true}) {
    INFO((read_only ? "read-only" : "for writing"));
    {
      auto opened = open_rocksdb_state_store(path, read_only);
      if (opened) {
        FAIL_CHECK("the damaged log opened silently: " << standing(**opened));
      } else {
        CHECK(opened.error().code()
              == static_cast<uint8_t>(errc::state_store_failed));
        CHECK_THAT(render(opened.error()),
                   Catch::Contains(log) && Catch::Contains("write-ahead log")
                     && Catch::Contains("damaged")
                     && Catch::Contains("state.recover = \"point_in_time\""));
      }
    } // closed before the files are compared
    INFO("files the open changed:" << changes(damaged, contents_of(path)));
    CHECK(contents_of(path) == damaged);
  }
}

TEST_CASE("a RocksDB state store whose log ends in a cut-off record, as a "
          "crash mid-write leaves it, opens with every whole record",
          "[state][rocksdb][wal]") {
  temp_dir dir;
  auto path = dir.sub("state");
  write_rounds(path);
  auto log = the_log(path);
  // Into the last record (the last round's last batch): the batch goes,
  // every earlier one stays.
  fs::resize_file(log, fs::file_size(log) - 20);
  auto store = open_rocksdb_state_store(path);
  if (!store)
    FAIL(render(store.error()));
  CHECK(standing(**store)
        == "1900 of 2000 keys at the last round, 100 at an older one, 0 "
           "missing");
}

namespace {

/// Every key's record bytes, to compare two opens of one store.
std::map<std::string, std::string> records_of(state_store& s) {
  std::map<std::string, std::string> out;
  REQUIRE_FALSE(s.scan([&](const key& k, std::string_view bytes) {
    out[k.to_string()] = std::string{bytes};
    return true;
  }));
  return out;
}

} // namespace

TEST_CASE("a RocksDB state store recovers a damaged write-ahead log to the "
          "point of the damage only when asked, and says what it dropped",
          "[state][rocksdb][wal]") {
  damaged_store d;
  const auto& path = d.path;
  const auto& log = d.log;
  const auto& damaged = d.damaged;
  std::vector<std::string> warnings;
  log_writer report = [&](log_level level, std::string_view line) {
    CHECK(level == log_level::warning);
    warnings.emplace_back(line);
  };
  // Read-only: what the recovery would keep, changing nothing.
  std::map<std::string, std::string> kept;
  {
    auto ro = open_rocksdb_state_store(path, true,
                                       state_recovery::point_in_time, report);
    if (!ro)
      FAIL(render(ro.error()));
    kept = records_of(**ro);
    REQUIRE(warnings.size() == 1);
    CHECK_THAT(warnings[0],
               Catch::StartsWith("state store " + path
                                 + ": point-in-time recovery")
                 && Catch::Contains(log) && Catch::Contains("read-only")
                 && Catch::Contains("nothing on disk changed")
                 && Catch::Contains("keys would go back to an older"
                                    " state"));
  }
  CHECK(contents_of(path) == damaged);
  // Every key is there, older than the last round: the log before the
  // damage held the first rounds whole.
  CHECK(kept.size() == wal_keys);
  for (const auto& [k, bytes] : kept) {
    auto rec = detail::decode_state_record(bytes);
    REQUIRE(rec);
    CHECK(rec->events < wal_rounds);
  }
  // For writing: the same states, the rest of the log dropped for good.
  {
    auto rw = open_rocksdb_state_store(path, false,
                                       state_recovery::point_in_time, report);
    if (!rw)
      FAIL(render(rw.error()));
    REQUIRE(warnings.size() == 2);
    CHECK_THAT(warnings[1], Catch::Contains(log)
                              && Catch::Contains("dropping for good")
                              && Catch::Contains("keys went back"));
    CHECK(records_of(**rw) == kept);
  }
  CHECK(contents_of(path) != damaged);
  // The damaged log is gone: a strict open works and sees the same.
  auto again = open_rocksdb_state_store(path);
  if (!again)
    FAIL(render(again.error()));
  CHECK(records_of(**again) == kept);
  CHECK(warnings.size() == 2);
}

TEST_CASE("a runtime does not start on a damaged write-ahead log, and "
          "starts with state.recover = \"point_in_time\"",
          "[state][rocksdb][wal]") {
  using rt_type = runtime<uint64_t, uint64_t>;
  damaged_store d;
  settings s;
  s.order = order_mode::global; // the default before 0.2.0
  s.max_attempts = 1; // the default before 0.2.0
  s.threads = 1;
  s.state_store = state_backend::rocksdb;
  s.state_path = d.path;
  auto factory = [](const handler_params&) {
    return std::make_unique<state_test::folding>();
  };
  {
    auto rt = rt_type::start(s, factory);
    REQUIRE_FALSE(rt);
    CHECK(rt.error().code() == static_cast<uint8_t>(errc::state_store_failed));
    CHECK_THAT(render(rt.error()), Catch::Contains(d.log));
  }
  CHECK(contents_of(s.state_path) == d.damaged);
  s.state_recover = state_recovery::point_in_time;
  auto rt = rt_type::start(s, factory);
  if (!rt)
    FAIL(render(rt.error()));
  (*rt)->stop();
}
