// SPDX-License-Identifier: Apache-2.0
// Parking that outlives a runtime (SQLite across restarts), parking turned
// off, and late completions: the rest of the parking properties.

#include <catch2/catch.hpp>

#include <cstdio>
#include <cstdlib>
#include <map>
#include <random>
#include <set>
#include <thread>

#include <unistd.h>

#include "child_process.hpp"
#include "parking_runs.hpp"
#include "temp_dir.hpp"

using namespace parking_support;
using test_support::child_pipe;
using test_support::child_process;
using test_support::child_spec;
using test_support::temp_dir;

TEST_CASE("with park = sqlite parked keys keep their events in order across "
          "a restart, new events park behind them, and replay runs them all",
          "[parking][durable]") {
  static_assert(codec<item>::available, "the test payload needs a codec");
  auto seed = fault_seed();
  INFO("seed " << seed << " (rerun with KEYLANE_SEED=" << seed << ")");
  auto live_before = item::live.load();
  temp_dir dir;
  auto cfg = fault_settings(order_mode::per_key);
  cfg.park = park_mode::sqlite;
  cfg.park_path = (dir.path / "parked.db").string();
  const size_t keys = 24;
  {
    scenario sc{cfg, keys, 2048, seed};
    sc.string_keys = true;
    std::vector<parked_key> keys_before;
    std::map<uint32_t, std::vector<parked_event<item>>> before;
    {
      INFO("first runtime");
      harness a{sc, false};
      run_phase(a, sc.make_items(400, 3, fault_mix{}, some_hot_key(keys)));
      REQUIRE_FALSE(sc.m.parked_keys().empty());
      auto ks = a.rt->parked_keys();
      REQUIRE(ks);
      keys_before = *ks;
      for (auto k : sc.m.parked_keys()) {
        auto evs = a.rt->parked_events(sc.key_of(k));
        REQUIRE(evs);
        before[k] = std::move(*evs);
      }
      a.shutdown(true);
    }
    {
      INFO("second runtime on the same file");
      harness b{sc, false};
      auto ks = b.rt->parked_keys();
      REQUIRE(ks);
      REQUIRE(ks->size() == keys_before.size());
      for (size_t i = 0; i < ks->size(); ++i) {
        CHECK((*ks)[i].k == keys_before[i].k);
        CHECK((*ks)[i].count == keys_before[i].count);
        CHECK((*ks)[i].first_reason == keys_before[i].first_reason);
        CHECK((*ks)[i].parked_at == keys_before[i].parked_at);
      }
      problems p;
      for (auto& [k, was] : before) {
        auto now = b.rt->parked_events(sc.key_of(k));
        REQUIRE(now);
        if (now->size() != was.size()) {
          p.add("key ", k, ": ", now->size(), " parked events after the "
                "restart, ", was.size(), " before");
          continue;
        }
        for (size_t i = 0; i < was.size(); ++i) {
          auto& x = was[i];
          auto& y = (*now)[i];
          if (x.id != y.id || x.seq != y.seq || x.k != y.k
              || x.payload.id != y.payload.id
              || x.payload.key_id != y.payload.key_id
              || x.payload.producer != y.payload.producer
              || x.reason != y.reason || x.attempts != y.attempts
              || x.parked_at != y.parked_at)
            p.add("key ", k, ": record #", i, " (id ", x.payload.id,
                  ") changed across the restart");
        }
      }
      CHECK_NO_PROBLEMS(p);
      {
        INFO("new events, parked behind for parked keys");
        run_phase(b, sc.make_items(4 * keys, 3, fault_mix{},
                                   [](auto& rng) { return rng() % keys; }));
      }
      {
        INFO("replay of every parked key after healing every fault");
        heal_all(sc);
        replay_phase(b, 100, 100, healthy_mix(), 2);
        CHECK(sc.m.parked_keys().empty());
      }
      b.shutdown(true);
    }
    {
      INFO("third runtime on the same file");
      harness c{sc, false};
      auto ks = c.rt->parked_keys();
      REQUIRE(ks);
      CHECK(ks->empty());
      c.shutdown(true);
    }
  }
  CHECK(item::live.load() == live_before);
}

TEST_CASE("with park = none a final failure comes out as failed and the "
          "key's later events still run",
          "[parking][none]") {
  auto seed = fault_seed();
  auto live_before = item::live.load();
  uint64_t i = 0;
  for (auto order : {order_mode::per_key, order_mode::global}) {
    auto s = seed + i++;
    auto cfg = fault_settings(order);
    cfg.park = park_mode::none;
    INFO("seed " << s << " = KEYLANE_SEED " << seed << " + " << i - 1
                 << " (rerun with KEYLANE_SEED=" << seed << "), "
                 << describe(cfg, false));
    const size_t keys = 32;
    scenario sc{cfg, keys, 1024, s};
    harness h{sc, false};
    // Nothing is cut short by parking: the hot key runs every one of its
    // events, hangs included, one after another.
    fault_mix mix;
    mix.hang_share = 5;
    run_phase(h, sc.make_items(600, 3, mix, some_hot_key(keys)));
    auto st = h.rt->stats();
    CHECK(st.parked == 0);
    CHECK(st.failed > 0); // the workload did fail for good somewhere
    auto r = h.rt->replay(sc.key_of(0));
    REQUIRE(r);
    CHECK(*r == 0);
    h.shutdown(true);
  }
  CHECK(item::live.load() == live_before);
}

namespace {

// Keeps the completion of a timed-out attempt and finishes it (ok, with a
// stale result) inside a later `on_event` call of the same lane.
class stale_finisher : public handler<item, uint64_t> {
public:
  void on_event(item& x, completion<uint64_t> done) override {
    auto attempt = ++attempts_[x.id];
    if (x.producer == 1 && attempt == 1) {
      stash_.emplace(std::move(done)); // never finished in time
      return;
    }
    if (stash_) {
      stash_->ok(stale_result(x.id));
      stash_.reset();
    }
    if (x.producer == 1)
      done.fail_permanently("second attempt refuses");
    else
      done.ok(expected_result(x));
  }

private:
  std::map<uint64_t, uint32_t> attempts_;
  std::optional<completion<uint64_t>> stash_;
};

} // namespace

TEST_CASE("a timed-out attempt's completion finished late inside a later "
          "handler call of the lane changes nothing",
          "[parking][timeout]") {
  auto live_before = item::live.load();
  {
    handler_factory make = [](const handler_params&) {
      return std::make_unique<stale_finisher>();
    };
    settings cfg;
    cfg.threads = 2;
    cfg.order = order_mode::per_key;
    cfg.attempt_timeout_ms = 40;
    cfg.initial_backoff_ms = 1;
    std::unique_ptr<ev_type> x, y;
    SECTION("inside the same event's next attempt") {
      cfg.max_attempts = 2;
      auto rt = rt_type::start(cfg, make);
      REQUIRE(rt);
      // producer 1: the first attempt hangs, the second refuses for good.
      REQUIRE((*rt)->submit(key{uint64_t{0}}, item{1, 0, 1}));
      REQUIRE((*rt)->pull(x, wait_limit));
      CHECK(x->status == outcome::parked);
      CHECK(x->attempts == 2);
      CHECK(x->error == "second attempt refuses");
      CHECK_FALSE(x->result.has_value());
      x.reset();
      (*rt)->stop();
    }
    SECTION("inside the next event of the key") {
      cfg.max_attempts = 1;
      cfg.park = park_mode::none;
      auto rt = rt_type::start(cfg, make);
      REQUIRE(rt);
      // x hangs and times out; y, queued behind it on the same lane,
      // finishes x's completion before its own.
      REQUIRE((*rt)->submit(key{uint64_t{0}}, item{1, 0, 1}));
      REQUIRE((*rt)->submit(key{uint64_t{0}}, item{2, 0, 0}));
      REQUIRE((*rt)->pull(x, wait_limit));
      REQUIRE((*rt)->pull(y, wait_limit));
      CHECK(x->payload.id == 1);
      CHECK(x->status == outcome::failed);
      CHECK_FALSE(x->result.has_value());
      CHECK(y->status == outcome::ok);
      CHECK(y->result == expected_result(y->payload));
      x.reset();
      y.reset();
      (*rt)->stop();
    }
  }
  CHECK(item::live.load() == live_before);
}

TEST_CASE("under random failures with large workloads order, accounting, "
          "parking and replay hold",
          "[parking][property][.stress]") {
  auto seed = fault_seed();
  run_property(seed, 20000, 256);
  run_replay_property(seed + 100, 12000, 200);
}

// -- kill -9 while a runtime parks in groups -----------------------------------

namespace {

using crash_rt = runtime<uint64_t, uint64_t>;

constexpr const char* crash_env = "KEYLANE_PARK_CRASH_CHILD";

/// What the child tells the parent for every parked tombstone its output
/// saw: one write(2) of 16 bytes, so the parent never reads half of one.
struct seen_tombstone {
  uint64_t key;
  uint64_t index;
};

// The downstream is down: every event fails for good and parks.
struct always_down : handler<uint64_t, uint64_t> {
  void on_event(uint64_t&, completion<uint64_t> done) override {
    done.fail_permanently("downstream unavailable");
  }
};

} // namespace

// Run by the crash test below in a process of its own (exec'd, so no state
// of the parent is shared); does nothing when run any other way.
TEST_CASE("(the child process of the grouped-parking crash test)",
          "[.park_crash_child]") {
  int fd = -1;
  uint64_t keys = 0, first = 0;
  std::string path;
  if (!child_spec(crash_env, fd, keys, first, path))
    return;
  settings s;
  s.max_attempts = 1; // the default before 0.2.0
  s.threads = 2;
  s.order = order_mode::per_key;
  s.park = park_mode::sqlite;
  s.park_path = path;
  auto on_output = [fd](crash_rt::event_type& ev) {
    if (ev.status != outcome::parked)
      _exit(4);
    seen_tombstone t{ev.k.integer(), ev.payload};
    if (write(fd, &t, sizeof(t)) != static_cast<ssize_t>(sizeof(t)))
      _exit(5);
  };
  handler_factory make = [](const handler_params&) {
    return std::make_unique<always_down>();
  };
  auto rt = crash_rt::start(s, make, on_output);
  if (!rt)
    _exit(6);
  for (uint64_t i = first; i < first + 50'000'000; ++i)
    if (!(*rt)->submit(key{uint64_t{i % keys}}, uint64_t{i}))
      _exit(7);
  pause(); // until killed
  _exit(8);
}

TEST_CASE("a runtime killed with kill -9 while it parks in groups has the "
          "record of every parked tombstone its output saw, each key's in "
          "order with no gap",
          "[parking][durable][crash]") {
  auto seed = fault_seed();
  INFO("seed " << seed << " (rerun with KEYLANE_SEED=" << seed << ")");
  std::mt19937_64 rng{seed};
  temp_dir dir;
  auto path = (dir.path / "parked.db").string();
  const uint64_t keys = 97;
  const uint64_t round_span = keys * 1'000'000; // round r starts at r * it
  std::map<uint64_t, std::set<uint64_t>> seen; // per key
  for (uint64_t round = 0; round < 2; ++round) {
    // Round 0 parks through lanes; round 1 starts with every key parked, so
    // its supervisor parks them.
    INFO("round " << round);
    child_pipe tombstones;
    auto kill_after = 2'000 + rng() % 30'000;
    auto spec = std::to_string(tombstones.write_fd()) + " "
                + std::to_string(keys) + " "
                + std::to_string(round * round_span) + " " + path;
    auto child = child_process::test_case("[.park_crash_child]", crash_env,
                                          spec, {tombstones.read_fd()});
    REQUIRE(child.started());
    tombstones.close_write();
    uint64_t count = 0;
    auto read_seen = [&](int timeout_ms) { // false on EOF or timeout
      return tombstones.read_records<seen_tombstone>(
        timeout_ms, [&](const seen_tombstone& t) {
          seen[t.key].insert(t.index);
          ++count;
        });
    };
    while (count < kill_after && read_seen(60'000)) {
    }
    // Any moment: mid-transaction, mid-fsync, between groups.
    std::this_thread::sleep_for(std::chrono::microseconds(rng() % 3000));
    child.kill_and_reap();
    while (read_seen(0)) { // written before the kill landed
    }
    tombstones.close_read();
    CHECK(count >= kill_after);
  }
  auto store = open_sqlite_park_store(path, sqlite_access::read_only);
  INFO(render(store ? caf::error{} : store.error()));
  REQUIRE(store);
  problems p;
  uint64_t stored = 0;
  for (uint64_t k = 0; k < keys; ++k) {
    auto recs = (*store)->records(key{k});
    REQUIRE(recs);
    stored += recs->size();
    // Per key: round 0's events k, k + keys, ... with no gap, then round
    // 1's from its own start, again with no gap (a whole group or none).
    std::set<uint64_t> have;
    uint64_t round = 0, expect = k, last_seq = 0;
    bool first = true; // of its round: seqs restart with each runtime
    for (auto& r : *recs) {
      auto x = codec<uint64_t>::decode(r.payload);
      REQUIRE(x);
      if (*x != expect && round == 0 && *x == round_span + k) {
        round = 1;
        expect = *x;
        first = true;
      }
      if (*x != expect) {
        p.add("key ", k, ": event ", *x, " where ", expect, " belongs");
        break;
      }
      if (!first && r.seq <= last_seq)
        p.add("key ", k, ": seq ", r.seq, " after ", last_seq);
      first = false;
      last_seq = r.seq;
      have.insert(*x);
      expect += keys;
    }
    for (auto x : seen[k])
      if (have.count(x) == 0)
        p.add("key ", k, ": tombstone of event ", x,
              " was output, its record is not in the store");
  }
  CHECK_NO_PROBLEMS(p);
  uint64_t seen_total = 0;
  for (auto& [k, xs] : seen)
    seen_total += xs.size();
  CHECK(stored >= seen_total);
}
