// SPDX-License-Identifier: Apache-2.0
// Exactly-once keyed state with the Kafka source, on librdkafka's mock
// cluster (which lives in this process and outlives the members): a member
// process (tests/kafka/member.cpp, handler "sum_state") sums each key's
// record values in keyed state kept in RocksDB; it is killed with SIGKILL
// at random moments (a printed seed), restarted on the same store, and at
// last left to finish. Every key's stored sum and count must then equal
// what was produced for it: no record lost, none applied twice.
//
// Two controls show that this check catches both ways of getting it
// wrong: a store that forgets the source positions after each kill (so
// redelivered records are applied again: sums too high), and state kept in
// memory across a kill (so committed records' changes are lost: too low).

#include <catch2/catch.hpp>

#include <chrono>
#include <csignal>
#include <cstdio>
#include <fstream>
#include <map>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <string_view>
#include <thread>
#include <tuple>
#include <utility>
#include <vector>

#include "cluster_fixture.hpp"
#include "keylane/codec.hpp"
#include "keylane/detail/state_record.hpp"
#include "keylane/state_store.hpp"
#include "state_check.hpp"
#include "state_totals.hpp"

using namespace std::chrono_literals;
using kafka_test::cluster_fixture;
using kafka_test::mismatches;
using kafka_test::read_store;
using kafka_test::total_count;
using kafka_test::totals;
using kafka_test::totals_by_key;
using kafka_test::wait_until;

namespace {

constexpr int record_count = 2000;
constexpr int key_count = 50;

/// How often a member writes its state and commits its offsets, and how
/// many keys it runs at once.
struct member_profile {
  int checkpoint_ms;
  int commit_interval_ms;
  int max_active_keys;
};

/// How a run keeps and treats its state.
struct scenario {
  /// `state.store` of the members killed, and of the last one.
  std::string killed_store = "rocksdb";
  std::string last_store = "rocksdb";
  int kills = 3;
  /// After each kill, rewrite the store without its source positions, so
  /// nothing tells a redelivered record from a new one (a control).
  bool forget_positions = false;
  /// Before each kill, wait until the member committed some record.
  bool kill_after_commit = false;
  /// The members' profiles, taken in turn. Checkpoints far apart and
  /// frequent commits: a source that committed records before their state
  /// was written would lose some at nearly every kill. Frequent
  /// checkpoints and rare commits: much written state is not committed at
  /// a kill, so its records come again and must be skipped; and fewer lane
  /// slots than keys, so keys retire and load their state again mid-run.
  std::vector<member_profile> profiles{{1000, 20, 64}, {30, 500, 16}};
  /// The last member's profile; by default the next one in turn.
  std::optional<member_profile> last_profile;
  /// Kill no sooner than this after the member began to answer.
  int min_kill_delay_ms = 0;
};

std::string member_config(const cluster_fixture& f, const std::string& store,
                          const member_profile& p) {
  return "[runtime]\norder = \"none\"\nwindow = 32\nkey_backlog = 8\n"
         "max_active_keys = "
         + std::to_string(p.max_active_keys)
         + "\nlane_linger_ms = 60000\n\n[scheduler]\nthreads = 2\n\n"
           "[handler]\nname = \"sum_state\"\n\n[handler.sum_state]\n"
           "max_delay_ms = 4\n\n[state]\nstore = \""
         + store + "\"\npath = \"" + (f.dir() / "state").string()
         + "\"\ncheckpoint_ms = " + std::to_string(p.checkpoint_ms)
         + "\n\n" + f.kafka_tables(p.commit_interval_ms)
         // A partition resumed after backpressure waits for the broker's
         // pending fetch (up to fetch.wait.max.ms, 500 ms by default):
         // shorter keeps records flowing, so a kill finds work in flight.
         + "\"fetch.wait.max.ms\" = 10\n";
}

/// Rewrites every record of the store at `path` without its source
/// positions: the control that defeats `state_origin`.
void forget_positions(const std::string& path) {
  auto st = keylane::open_rocksdb_state_store(path);
  REQUIRE(st);
  std::vector<keylane::state_entry> entries;
  auto err = (*st)->scan([&](const keylane::key& k, std::string_view bytes) {
    auto rec = keylane::detail::decode_state_record(bytes);
    if (rec) {
      rec->origins.clear();
      entries.push_back(
        keylane::state_entry{k, keylane::detail::encode_state_record(*rec)});
    }
    return true;
  });
  REQUIRE(!err);
  REQUIRE(!(*st)->write(entries, true));
}

/// True once `m` logged "R": its source runs and SIGTERM stops it.
bool has_started(const kafka_test::member_process& m) {
  std::ifstream in{m.log()};
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("R ", 0) == 0)
      return true;
  return false;
}

/// What a run produced and what its store held at the end.
struct run_result {
  totals_by_key want;
  totals_by_key got;
  kafka_test::member_logs logs;
};

/// Produces the records, kills `s.kills` members at random moments, lets
/// a last one finish and commit everything, and reads the store.
run_result run_killed(const scenario& s, uint32_t seed) {
  auto t0 = std::chrono::steady_clock::now();
  auto elapsed = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0)
      .count();
  };
  std::mt19937 rng{seed};
  cluster_fixture f{"range,roundrobin"};
  REQUIRE(f.ready());
  run_result out;
  // In one batch per member, produced before it starts: each has records
  // of its own to work on when it is killed.
  auto produced = 0;
  auto produce_batch = [&](int batch) {
    auto until = record_count * (batch + 1) / (s.kills + 1);
    std::vector<std::pair<std::string, std::string>> records;
    for (; produced < until; ++produced) {
      auto k = "k-" + std::to_string(rng() % key_count);
      auto v = static_cast<int64_t>(1 + rng() % 9);
      auto& w = out.want[k];
      w.state.sum += v;
      w.state.count += 1;
      records.emplace_back(k, std::to_string(v));
    }
    REQUIRE(f.produce_records(records));
  };
  auto committed = [&] { return f.logs().committed_total(); };
  auto state_dir = (f.dir() / "state").string();
  for (int kill = 0; kill < s.kills; ++kill) {
    // A random moment once the member works (its batch takes about a
    // second): events in flight, state written and not, commits behind.
    // Not a count of outputs: those come in bursts, and a kill right
    // after one would always find the same phase.
    auto delay = std::chrono::milliseconds(
      std::uniform_int_distribution<int>{s.min_kill_delay_ms, 1500}(rng));
    produce_batch(kill);
    const auto& profile = s.profiles[kill % s.profiles.size()];
    auto& m = f.start_member_with(member_config(f, s.killed_store, profile));
    REQUIRE(m.started());
    auto working = [&] {
      if (committed() >= produced)
        return true; // nothing left: killed idle
      auto l = kafka_test::member_logs::read({m.log()});
      return l.finished.size() > 0
             && (!s.kill_after_commit || l.committed_total() > 0);
    };
    REQUIRE(wait_until(working, 60s));
    std::this_thread::sleep_for(delay);
    m.signal(SIGKILL);
    REQUIRE(m.wait(10s) == 128 + SIGKILL);
    std::printf("%6.2f s: kill %d (checkpoint %d ms, commits %d ms, %d "
                "keys at once), %lld ms after the member began, after %zu "
                "finished lines in it, %lld records committed\n",
                elapsed(), kill + 1, profile.checkpoint_ms,
                profile.commit_interval_ms, profile.max_active_keys,
                static_cast<long long>(delay.count()),
                kafka_test::member_logs::read({m.log()}).finished.size(),
                static_cast<long long>(committed()));
    std::fflush(stdout);
    if (s.forget_positions)
      forget_positions(state_dir);
  }
  produce_batch(s.kills);
  auto& last = f.start_member_with(member_config(
    f, s.last_store,
    s.last_profile.value_or(s.profiles[s.kills % s.profiles.size()])));
  REQUIRE(last.started());
  // Running (its SIGTERM handler set) and done.
  REQUIRE(wait_until([&] { return has_started(last); }, 30s));
  REQUIRE(wait_until([&] { return committed() >= record_count; }, 90s));
  std::printf("%6.2f s: all %d records committed\n", elapsed(), record_count);
  last.signal(SIGTERM);
  REQUIRE(last.wait(30s) == 0);
  std::printf("%6.2f s: the last member stopped\n", elapsed());
  std::fflush(stdout);
  out.got = read_store(state_dir);
  out.logs = f.logs();
  return out;
}

uint32_t fresh_seed() {
  return std::random_device{}();
}

} // namespace

TEST_CASE("a member killed with SIGKILL again and again still applies every "
          "record to its key's state exactly once",
          "[kafka][state][crash]") {
  auto seed = fresh_seed();
  std::printf("exactly-once keyed state: seed %u\n", seed);
  INFO("seed " << seed);
  scenario s;
  auto r = run_killed(s, seed);
  auto bad = mismatches(r.want, r.got);
  for (size_t i = 0; i < bad.size() && i < 20; ++i)
    UNSCOPED_INFO(bad[i]);
  CHECK(bad.empty());
  // Every record was answered (ok, or skipped as applied before a kill),
  // and within each assignment a key's records came out in offset order.
  std::set<std::pair<int, int64_t>> answered;
  std::map<std::tuple<std::string, uint64_t, std::string>, int64_t>
    last_offset;
  size_t skipped = 0, out_of_order = 0;
  for (const auto& x : r.logs.finished) {
    if (x.status == "ok" || x.status == "skipped")
      answered.emplace(x.partition, x.offset);
    skipped += x.status == "skipped";
    auto [i, fresh] = last_offset.emplace(
      std::tuple{x.member, x.assignment, x.key}, x.offset);
    if (!fresh) {
      out_of_order += x.offset <= i->second;
      i->second = x.offset;
    }
  }
  CHECK(answered.size() == static_cast<size_t>(record_count));
  CHECK(out_of_order == 0);
  std::printf("exactly-once keyed state: %d records, %zu keys, %zu output "
              "lines, %zu skipped as applied before a kill, %zu commits\n",
              record_count, r.got.size(), r.logs.finished.size(), skipped,
              r.logs.commits.size());
}

TEST_CASE("control: a store that forgets the source positions at each kill "
          "applies redelivered records twice, and the check sees it",
          "[kafka][state][control]") {
  auto seed = fresh_seed();
  std::printf("control, positions forgotten: seed %u\n", seed);
  INFO("seed " << seed);
  scenario s;
  s.kills = 2;
  s.forget_positions = true;
  // No commits before the kill (the interval is longer than a life): all
  // its written state comes again; the last member commits normally.
  s.profiles = {{30, 60000, 64}};
  s.last_profile = member_profile{30, 20, 64};
  s.min_kill_delay_ms = 200; // some state is written by then

  auto r = run_killed(s, seed);
  auto bad = mismatches(r.want, r.got);
  for (size_t i = 0; i < bad.size() && i < 5; ++i)
    std::printf("  as expected, %s\n", bad[i].c_str());
  CHECK(!bad.empty());
  CHECK(total_count(r.got) > total_count(r.want)); // twice, never lost
}

TEST_CASE("control: state kept in memory across a kill loses the changes of "
          "committed records, and the check sees it",
          "[kafka][state][control]") {
  auto seed = fresh_seed();
  std::printf("control, memory store across a kill: seed %u\n", seed);
  INFO("seed " << seed);
  scenario s;
  s.kills = 1;
  s.killed_store = "memory";
  s.kill_after_commit = true;
  s.profiles = {{30, 20, 64}};
  auto r = run_killed(s, seed);
  auto bad = mismatches(r.want, r.got);
  for (size_t i = 0; i < bad.size() && i < 5; ++i)
    std::printf("  as expected, %s\n", bad[i].c_str());
  CHECK(!bad.empty());
  CHECK(total_count(r.got) < total_count(r.want)); // lost, never twice
}
