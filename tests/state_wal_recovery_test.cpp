// SPDX-License-Identifier: Apache-2.0
// Point-in-time recovery of a damaged RocksDB write-ahead log, byte by
// byte: one byte flipped at every 5 % of the log of stores of 10, 200 and
// 2,000 keys. Wherever RocksDB's own point-in-time recovery opens the
// copy, keylane's must open it too; after it every key holds a prefix fold
// of its writes, and the warning's figures are never below the truth: the
// key writes dropped exactly, the keys that went back at most (or
// "unknown", said as such).
#include <catch2/catch.hpp>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <regex>
#include <string>
#include <vector>

#include <rocksdb/db.h>
#include <rocksdb/env.h>
#include <rocksdb/options.h>

#include "keylane/detail/state_record.hpp"
#include "keylane/errc.hpp"
#include "keylane/state_store.hpp"

#include "temp_dir.hpp"

using namespace keylane;
namespace fs = std::filesystem;
using test_support::temp_dir;

namespace {

/// A store of `keys` keys, each written `rounds` times in batches of up to
/// 100 keys, as checkpoints write them.
struct store_shape {
  uint64_t keys;
  uint64_t rounds;
};

/// The events key `k` has after `round` writes: 1 to 5 more each write, so
/// that events and writes differ.
uint64_t events_after(uint64_t k, uint64_t round) {
  uint64_t n = 0;
  for (uint64_t r = 1; r <= round; ++r)
    n += 1 + (k * 7 + r) % 5;
  return n;
}

/// The state of key `k` after `events` events: a fold of them, so a state
/// of one count and another's bytes shows.
std::string fold_of(uint64_t k, uint64_t events) {
  uint64_t h = 1469598103934665603ULL ^ k;
  for (uint64_t e = 0; e < events; ++e)
    h = (h ^ e) * 1099511628211ULL;
  return std::to_string(k) + ":" + std::to_string(h) + std::string(16, 'x');
}

void write_store(const std::string& path, const store_shape& shape) {
  auto store = open_rocksdb_state_store(path);
  REQUIRE(store);
  for (uint64_t r = 1; r <= shape.rounds; ++r)
    for (uint64_t first = 0; first < shape.keys; first += 100) {
      std::vector<state_entry> batch;
      for (uint64_t k = first; k < std::min(first + 100, shape.keys); ++k) {
        detail::state_record rec;
        rec.events = events_after(k, r);
        rec.state = fold_of(k, rec.events);
        batch.push_back({key{k}, encode_state_record(rec)});
      }
      REQUIRE_FALSE((*store)->write(batch, false));
    }
}

/// The store's write-ahead log: its largest `*.log` file.
fs::path the_log(const std::string& path) {
  fs::path log;
  uintmax_t largest = 0;
  for (const auto& e : fs::directory_iterator{path})
    if (e.path().extension() == ".log" && e.file_size() > largest) {
      largest = e.file_size();
      log = e.path();
    }
  REQUIRE(largest > 0);
  return log;
}

void flip_byte(const fs::path& file, uintmax_t at) {
  std::fstream f{file, std::ios::in | std::ios::out | std::ios::binary};
  REQUIRE(f);
  f.seekg(static_cast<std::streamoff>(at));
  char c = 0;
  REQUIRE(f.get(c));
  f.seekp(static_cast<std::streamoff>(at));
  REQUIRE(f.put(static_cast<char>(c ^ 0x10)));
}

/// Whether RocksDB's own read-only open with point-in-time recovery opens
/// the store.
bool rocksdb_point_in_time_opens(const std::string& path) {
  rocksdb::Options o;
  o.wal_recovery_mode = rocksdb::WALRecoveryMode::kPointInTimeRecovery;
  rocksdb::DB* raw = nullptr;
  auto st = rocksdb::DB::OpenForReadOnly(o, path, &raw);
  std::unique_ptr<rocksdb::DB> db{raw};
  return st.ok();
}

/// What went back, as the test knows it from what it wrote.
struct true_loss {
  uint64_t keys = 0;
  uint64_t writes = 0;
  uint64_t events = 0;
};

/// Checks that every key holds a prefix fold of its writes; what went back.
true_loss check_prefix_folds(state_store& s, const store_shape& shape) {
  true_loss out;
  std::map<uint64_t, uint64_t> round_of; // key -> the round it holds
  auto err = s.scan([&](const key& k, std::string_view bytes) {
    REQUIRE(k.is_integer());
    auto id = k.integer();
    REQUIRE(id < shape.keys);
    auto rec = detail::decode_state_record(bytes);
    REQUIRE(rec);
    uint64_t r = 0;
    while (r <= shape.rounds && events_after(id, r) != rec->events)
      ++r;
    INFO("key " << id << " holds " << rec->events << " events");
    REQUIRE(r <= shape.rounds); // a count some write had
    REQUIRE(rec->state == fold_of(id, rec->events));
    round_of[id] = r;
    return true;
  });
  REQUIRE_FALSE(err);
  for (uint64_t k = 0; k < shape.keys; ++k) {
    auto r = round_of.count(k) ? round_of[k] : 0;
    if (r == shape.rounds)
      continue;
    ++out.keys;
    out.writes += shape.rounds - r;
    out.events += events_after(k, shape.rounds) - events_after(k, r);
  }
  return out;
}

/// The figures a recovery's warning states; -1 for "unknown".
struct reported_loss {
  int64_t writes = -1;
  int64_t keys = -1;
  int64_t events = -1;
};

int64_t number_after(const std::string& text, const std::string& pattern) {
  std::smatch m;
  if (!std::regex_search(text, m, std::regex{pattern}))
    return -1;
  return std::stoll(m[1].str());
}

reported_loss read_warning(const std::string& w) {
  reported_loss out;
  out.writes = number_after(w, "for good the ([0-9]+) key writes");
  out.keys = number_after(w, "at most ([0-9]+) keys (went|would go) back");
  if (out.keys < 0)
    out.keys = number_after(w, "all of them readable: ([0-9]+) keys");
  out.events = number_after(w, "losing ([0-9]+) events");
  return out;
}

/// Flips a byte at every 5 % of the log of a copy of a store of `shape`
/// (and its last byte) and recovers each copy; how many recoveries said
/// the keys that went back were unknown.
void recover_at_every_twentieth(const store_shape& shape) {
  temp_dir dir;
  auto pristine = dir.sub("pristine");
  write_store(pristine, shape);
  auto log_name = the_log(pristine).filename();
  auto size = fs::file_size(fs::path{pristine} / log_name);
  std::vector<uintmax_t> positions;
  for (int i = 0; i < 20; ++i)
    positions.push_back(size * static_cast<uintmax_t>(i) / 20);
  positions.push_back(size - 1);
  int recovered = 0, unknown = 0;
  for (auto at : positions) {
    INFO(shape.keys << " keys, " << shape.rounds << " rounds; log of "
                    << size << " bytes, byte " << at << " flipped");
    auto path = dir.sub("copy-" + std::to_string(at));
    fs::copy(pristine, path, fs::copy_options::recursive);
    flip_byte(fs::path{path} / log_name, at);
    if (!rocksdb_point_in_time_opens(path))
      continue; // nothing to recover with
    std::vector<std::string> warnings;
    log_writer report = [&](log_level, std::string_view line) {
      warnings.emplace_back(line);
    };
    {
      auto ro = open_rocksdb_state_store(path, true,
                                         state_recovery::point_in_time,
                                         report);
      if (!ro)
        FAIL_CHECK("the read-only recovery failed: " << render(ro.error()));
    }
    auto rw = open_rocksdb_state_store(path, false,
                                       state_recovery::point_in_time, report);
    if (!rw) {
      FAIL_CHECK("the recovery failed: " << render(rw.error()));
      continue;
    }
    ++recovered;
    auto truth = check_prefix_folds(**rw, shape);
    INFO("truly went back: " << truth.keys << " keys, " << truth.writes
                             << " key writes, " << truth.events
                             << " events");
    if (warnings.empty()) {
      // No damage RocksDB reported: nothing may have gone back.
      CHECK(truth.keys == 0);
      continue;
    }
    if (warnings.size() != 2) {
      FAIL_CHECK(warnings.size() << " warnings, not 2");
      continue;
    }
    INFO("warning: " << warnings[1]);
    auto said = read_warning(warnings[1]);
    // The read-only preview states the same figures.
    auto preview = read_warning(warnings[0]);
    CHECK(preview.writes == said.writes);
    CHECK(preview.keys == said.keys);
    CHECK(preview.events == said.events);
    if (said.keys < 0) {
      CHECK_THAT(warnings[1], Catch::Contains("unknown"));
      ++unknown;
    } else {
      CHECK(said.keys >= static_cast<int64_t>(truth.keys));
      // keylane's own entry (its marker) may be among them.
      CHECK(said.writes >= static_cast<int64_t>(truth.writes));
    }
    if (said.events >= 0)
      CHECK(said.events >= static_cast<int64_t>(truth.events));
    else
      CHECK_THAT(warnings[1], Catch::Contains("events")
                                && Catch::Contains("unknown"));
  }
  WARN(shape.keys << " keys, log of " << size << " bytes: "
                  << positions.size() << " bytes flipped, " << recovered
                  << " recovered, " << unknown << " said unknown");
  // Most flips leave readable records after them, and so a count.
  CHECK(recovered >= 18);
  CHECK(unknown <= 2);
}

} // namespace

TEST_CASE("point-in-time recovery opens a write-ahead log damaged anywhere "
          "that RocksDB's own recovery opens, and never under-counts what "
          "went back",
          "[state][rocksdb][wal][recover]") {
  SECTION("10 keys") {
    recover_at_every_twentieth({10, 100});
  }
  SECTION("200 keys") {
    recover_at_every_twentieth({200, 20});
  }
  SECTION("2,000 keys") {
    recover_at_every_twentieth({2000, 6});
  }
}
