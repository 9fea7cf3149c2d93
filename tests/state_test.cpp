// SPDX-License-Identifier: Apache-2.0
// Keyed state: what a stateful handler sees is always the fold of its
// key's earlier events, across retires, failures, parking, stops and
// restarts; durable events are reported once, in each key's order.

#include <catch2/catch.hpp>

#include <caf/all.hpp>

#include <map>
#include <mutex>
#include <random>
#include <set>
#include <thread>
#include <vector>

#include "keylane/detail/state_record.hpp"
#include "keylane/state_store.hpp"
#include "state_support.hpp"

using namespace state_test;
using namespace std::chrono_literals;
namespace kl = keylane;
using rt_type = kl::runtime<uint64_t, uint64_t>;

namespace {

kl::handler_factory folding_factory(
  kl::rollback_by by = kl::rollback_by::copy) {
  return [by](const kl::handler_params&) {
    return std::make_unique<folding>(by);
  };
}

kl::settings state_settings(kl::state_backend store, const fs::path& dir) {
  kl::settings s;
  s.max_attempts = 1; // the default before 0.2.0
  s.threads = 2;
  s.order = kl::order_mode::per_key;
  s.state_store = store;
  if (store == kl::state_backend::rocksdb)
    s.state_path = (dir / "state").string();
  s.initial_backoff_ms = 0;
  s.max_backoff_ms = 0;
  return s;
}

/// Checks every output against the sequential fold of its key's events.
struct fold_checker {
  std::mutex mtx;
  std::map<uint64_t, fold> expected; // per key, as outputs arrive
  std::vector<std::string> problems;
  uint64_t outputs = 0;

  void check(rt_type::event_type& ev) {
    std::lock_guard<std::mutex> guard{mtx};
    ++outputs;
    auto k = ev.k.integer();
    if (ev.status != kl::outcome::ok) {
      problems.push_back("key " + std::to_string(k) + ": outcome "
                         + kl::to_string(ev.status) + " " + ev.error);
      return;
    }
    auto& f = expected[k];
    f.apply(ev.payload);
    if (!ev.result || *ev.result != f.hash)
      problems.push_back("key " + std::to_string(k) + " event "
                         + std::to_string(f.count)
                         + ": the state was not the fold of its events");
  }
};

std::optional<kl::detail::state_record> stored(kl::state_store& st,
                                               uint64_t k) {
  auto got = st.read(kl::key{k});
  REQUIRE(got);
  if (!*got)
    return std::nullopt;
  auto rec = kl::detail::decode_state_record(**got);
  REQUIRE(rec);
  return *rec;
}

void run_fold_property(kl::state_backend store, uint64_t seed) {
  INFO("seed " << seed << " (rerun with KEYLANE_SEED=" << seed << ")");
  std::mt19937_64 rng{seed};
  temp_dir dir;
  auto s = state_settings(store, dir.path);
  // Few slots and short lingers: keys retire and come back often, so
  // their state crosses lanes through the store.
  s.max_active_keys = 1 + rng() % 8;
  s.lane_linger_ms = rng() % 3;
  s.state_checkpoint_ms = 1 + rng() % 20;
  s.state_checkpoint_events = rng() % 2 ? 0 : 1 + rng() % 5;
  // No cache, a tiny one (evicting all the time), or the default.
  const size_t caches[] = {0, 256, s.state_cache_bytes};
  s.state_cache_bytes = caches[rng() % 3];
  s.max_attempts = 3;
  // Failed attempts taken back by a copy of the state or by the handler's
  // journal of undo steps.
  auto by = rng() % 2 ? kl::rollback_by::journal : kl::rollback_by::copy;
  INFO("rollback by " << (by == kl::rollback_by::journal ? "journal" : "copy"));
  INFO("max_active_keys " << s.max_active_keys << ", linger "
                          << s.lane_linger_ms << " ms, checkpoint "
                          << s.state_checkpoint_ms << " ms / "
                          << s.state_checkpoint_events << " events, cache "
                          << s.state_cache_bytes << " bytes");
  fold_checker chk;
  const uint64_t keys = 1 + rng() % 40, events = 4000;
  {
    auto rt = rt_type::start(s, folding_factory(by),
                             [&](rt_type::event_type& ev) { chk.check(ev); });
    REQUIRE(rt);
    // A slow listener holds the writer back, so keys retire and come back
    // while their last state is still unwritten.
    auto hold_us = rng() % 2 ? 0 : 200 + rng() % 2000;
    INFO("durable listener holds the writer " << hold_us << " us");
    if (hold_us > 0)
      (*rt)->on_state_durable([hold_us](const std::vector<uint64_t>&) {
        std::this_thread::sleep_for(std::chrono::microseconds(hold_us));
      });
    for (uint64_t i = 0; i < events; ++i) {
      auto a = static_cast<act>(rng() % 4);
      REQUIRE((*rt)->submit(kl::key{rng() % keys}, make_value(i, a)));
      if (rng() % 500 == 0)
        std::this_thread::sleep_for(std::chrono::milliseconds(rng() % 5));
    }
    REQUIRE((*rt)->drain(60s));
    auto rep = (*rt)->stop();
    CHECK(rep.unfinished.empty());
  }
  CHECK(chk.problems.empty());
  if (!chk.problems.empty())
    FAIL(chk.problems.front());
  CHECK(chk.outputs == events);
  if (store != kl::state_backend::rocksdb)
    return;
  // What stop left in the store is each key's whole fold.
  auto st = kl::open_rocksdb_state_store(s.state_path, true);
  REQUIRE(st);
  for (auto& [k, f] : chk.expected) {
    auto rec = stored(**st, k);
    REQUIRE(rec);
    CHECK(rec->events == f.count);
    CHECK(decoded(*rec) == f);
  }
}

} // namespace

TEST_CASE("a stateful handler always sees the fold of its key's earlier "
          "events, with random retires, lingers, checkpoints and failures",
          "[state][property]") {
  auto base = seed();
  SECTION("memory store") {
    for (uint64_t i = 0; i < 3; ++i)
      run_fold_property(kl::state_backend::memory, base + i);
  }
  SECTION("rocksdb store") {
    for (uint64_t i = 0; i < 3; ++i)
      run_fold_property(kl::state_backend::rocksdb, base + 10 + i);
  }
}

TEST_CASE("state kept in rocksdb survives a stop and a restart on the same "
          "directory", "[state][rocksdb]") {
  temp_dir dir;
  auto s = state_settings(kl::state_backend::rocksdb, dir.path);
  fold_checker chk;
  for (int run = 0; run < 3; ++run) {
    INFO("run " << run);
    auto rt = rt_type::start(s, folding_factory(),
                             [&](rt_type::event_type& ev) { chk.check(ev); });
    REQUIRE(rt);
    for (uint64_t i = 0; i < 300; ++i)
      REQUIRE((*rt)->submit(kl::key{i % 7}, make_value(run * 1000 + i,
                                                          act::now)));
    REQUIRE((*rt)->drain(30s));
    auto st = (*rt)->stats();
    CHECK(st.state_loads >= 7);
    (*rt)->stop();
  }
  CHECK(chk.problems.empty());
  CHECK(chk.outputs == 900);
}

TEST_CASE("with state.store = \"none\" each activation starts from a default "
          "state", "[state]") {
  temp_dir dir;
  auto s = state_settings(kl::state_backend::none, dir.path);
  s.max_active_keys = 1;
  s.lane_linger_ms = 0;
  std::mutex mtx;
  std::vector<uint64_t> counts;
  struct counting : kl::stateful_handler<uint64_t, uint64_t, fold> {
    void on_event(uint64_t& v, kl::completion<uint64_t> done) override {
      state().apply(v);
      done.ok(state().count);
    }
  };
  auto rt = rt_type::start(
    s, [](const kl::handler_params&) { return std::make_unique<counting>(); },
    [&](rt_type::event_type& ev) {
      std::lock_guard<std::mutex> guard{mtx};
      counts.push_back(*ev.result);
    });
  REQUIRE(rt);
  // Two keys alternate through one slot: each event finds its key retired.
  for (uint64_t i = 0; i < 6; ++i) {
    REQUIRE((*rt)->submit(kl::key{i % 2}, uint64_t{i}));
    REQUIRE((*rt)->drain(10s));
  }
  (*rt)->stop();
  REQUIRE(counts.size() == 6);
  CHECK(std::count(counts.begin(), counts.end(), 1) >= 4);
}

TEST_CASE("a parked key's state stays as of its last good event and replay "
          "continues from it", "[state][parking]") {
  temp_dir dir;
  auto s = state_settings(kl::state_backend::rocksdb, dir.path);
  s.max_attempts = 2;
  static std::atomic<bool> down{true};
  down = true;
  struct gated : kl::stateful_handler<uint64_t, uint64_t, fold> {
    void on_event(uint64_t& v, kl::completion<uint64_t> done) override {
      state().apply(v); // changed before it knows: rollback must undo it
      if (v >= 100 && down)
        done.fail("downstream unavailable");
      else
        done.ok(state().hash);
    }
  };
  std::mutex mtx;
  std::vector<std::pair<kl::outcome, uint64_t>> outs;
  auto rt = rt_type::start(
    s, [](const kl::handler_params&) { return std::make_unique<gated>(); },
    [&](rt_type::event_type& ev) {
      std::lock_guard<std::mutex> guard{mtx};
      outs.emplace_back(ev.status, ev.result ? *ev.result : 0);
    });
  REQUIRE(rt);
  for (uint64_t v : {1, 2, 100, 3})
    REQUIRE((*rt)->submit(kl::key{uint64_t{5}}, uint64_t{v}));
  REQUIRE((*rt)->drain(10s));
  {
    std::lock_guard<std::mutex> guard{mtx};
    REQUIRE(outs.size() == 4);
    CHECK(outs[2].first == kl::outcome::parked);
    CHECK(outs[3].first == kl::outcome::parked);
  }
  down = false;
  auto n = (*rt)->replay(kl::key{uint64_t{5}});
  REQUIRE(n);
  CHECK(*n == 2);
  REQUIRE((*rt)->drain(10s));
  fold f;
  for (uint64_t v : {1, 2, 100, 3})
    f.apply(v);
  {
    std::lock_guard<std::mutex> guard{mtx};
    REQUIRE(outs.size() == 6);
    CHECK(outs[5].first == kl::outcome::ok);
    CHECK(outs[5].second == f.hash); // 1, 2, then 100 and 3 once each
  }
  (*rt)->stop();
  auto st = kl::open_rocksdb_state_store(s.state_path, true);
  REQUIRE(st);
  auto rec = stored(**st, 5);
  REQUIRE(rec);
  CHECK(decoded(*rec) == f);
  CHECK(rec->events == 4);
}

TEST_CASE("every event that ends is reported durable once, after its key's "
          "earlier events", "[state][durable]") {
  for (auto mode : {kl::state_sync::checkpoint, kl::state_sync::every_event}) {
    INFO("sync " << kl::to_string(mode));
    temp_dir dir;
    auto s = state_settings(kl::state_backend::rocksdb, dir.path);
    s.state_sync_mode = mode;
    s.max_active_keys = 3;
    s.lane_linger_ms = 0;
    std::mutex mtx;
    std::map<uint64_t, uint64_t> key_of; // seq -> key
    std::set<uint64_t> durable;
    std::vector<std::string> problems;
    uint64_t late = 0; // outputs that came before their durable report
    auto rt = rt_type::start(
      s, folding_factory(), [&](rt_type::event_type& ev) {
        std::lock_guard<std::mutex> guard{mtx};
        if (durable.count(ev.seq) == 0)
          ++late;
      });
    REQUIRE(rt);
    std::map<uint64_t, uint64_t> last_durable; // key -> seq
    (*rt)->on_state_durable([&](const std::vector<uint64_t>& seqs) {
      std::lock_guard<std::mutex> guard{mtx};
      for (auto q : seqs) {
        if (!durable.insert(q).second)
          problems.push_back("seq " + std::to_string(q) + " reported twice");
        auto i = key_of.find(q);
        if (i == key_of.end())
          continue;
        auto& last = last_durable[i->second];
        if (q < last)
          problems.push_back("seq " + std::to_string(q) + " after "
                             + std::to_string(last));
        last = q;
      }
    });
    const uint64_t events = 2000;
    for (uint64_t i = 0; i < events; ++i) {
      auto k = i % 11;
      auto res = (*rt)->submit(kl::key{k}, make_value(i, act::now));
      REQUIRE(res);
      std::lock_guard<std::mutex> guard{mtx};
      key_of[res.seq()] = k;
    }
    REQUIRE((*rt)->drain(30s));
    auto all_durable = [&] {
      std::lock_guard<std::mutex> guard{mtx};
      return durable.size() == events;
    };
    auto deadline = std::chrono::steady_clock::now() + 10s;
    while (!all_durable() && std::chrono::steady_clock::now() < deadline)
      std::this_thread::sleep_for(1ms);
    CHECK(all_durable());
    (*rt)->stop();
    std::lock_guard<std::mutex> guard{mtx};
    CHECK(problems.empty());
    if (mode == kl::state_sync::every_event)
      CHECK(late == 0); // the output waited for the disk
  }
}

namespace {

/// A payload from a replayable source: a stream and a position in it.
struct sourced {
  std::string stream;
  int64_t pos = 0;
  uint64_t value = 0;
};

} // namespace

template <>
struct keylane::state_origin<sourced> {
  static constexpr bool available = true;
  static bool of(const sourced& x, std::string& stream, int64_t& position) {
    stream = x.stream;
    position = x.pos;
    return true;
  }
};

TEST_CASE("an event redelivered from a source position the state already "
          "holds is skipped, not applied twice", "[state][origin]") {
  using src_rt = kl::runtime<sourced, uint64_t>;
  struct summing : kl::stateful_handler<sourced, uint64_t, fold> {
    void on_event(sourced& x, kl::completion<uint64_t> done) override {
      state().apply(x.value);
      done.ok(state().count);
    }
  };
  temp_dir dir;
  auto s = state_settings(kl::state_backend::rocksdb, dir.path);
  s.lane_linger_ms = 0;
  auto factory = [](const kl::handler_params&) {
    return std::make_unique<summing>();
  };
  std::mutex mtx;
  std::map<kl::outcome, int> seen;
  auto on_out = [&](src_rt::event_type& ev) {
    std::lock_guard<std::mutex> guard{mtx};
    seen[ev.status]++;
  };
  // First life: positions 0..9; second life (after a "crash" that lost
  // the commits): the source redelivers from 5.
  for (auto [from, to] : {std::pair{0, 10}, std::pair{5, 15}}) {
    auto rt = src_rt::start(s, factory, on_out);
    REQUIRE(rt);
    for (int p = from; p < to; ++p)
      REQUIRE((*rt)->submit(kl::key{"acct"}, sourced{"topic/0", p,
                                                     uint64_t(p * 10)}));
    REQUIRE((*rt)->drain(10s));
    (*rt)->stop();
  }
  CHECK(seen[kl::outcome::ok] == 15);
  CHECK(seen[kl::outcome::skipped] == 5);
  auto st = kl::open_rocksdb_state_store(s.state_path, true);
  REQUIRE(st);
  auto got = (*st)->read(kl::key{"acct"});
  REQUIRE(got);
  REQUIRE(*got);
  auto rec = kl::detail::decode_state_record(**got);
  REQUIRE(rec);
  fold f;
  for (int p = 0; p < 15; ++p)
    f.apply(uint64_t(p * 10));
  CHECK(decoded(*rec) == f);
  CHECK(rec->position("topic/0") == 14);
}

TEST_CASE("a state record that does not decode fails the key's activation "
          "with a clear error and parks its events", "[state][errors]") {
  temp_dir dir;
  auto s = state_settings(kl::state_backend::rocksdb, dir.path);
  s.max_attempts = 2;
  {
    auto st = kl::open_rocksdb_state_store(s.state_path);
    REQUIRE(st);
    REQUIRE(!(*st)->write({kl::state_entry{kl::key{uint64_t{9}}, "garbage"}},
                          true));
  }
  std::mutex mtx;
  std::vector<std::pair<kl::outcome, std::string>> outs;
  auto rt = rt_type::start(s, folding_factory(), [&](rt_type::event_type& ev) {
    std::lock_guard<std::mutex> guard{mtx};
    outs.emplace_back(ev.status, ev.error);
  });
  REQUIRE(rt);
  REQUIRE((*rt)->submit(kl::key{uint64_t{9}}, make_value(1, act::now)));
  REQUIRE((*rt)->submit(kl::key{uint64_t{8}}, make_value(1, act::now)));
  REQUIRE((*rt)->drain(10s));
  auto stats = (*rt)->stats();
  (*rt)->stop();
  REQUIRE(outs.size() == 2);
  int parked = 0, ok = 0;
  for (auto& [status, error] : outs) {
    parked += status == kl::outcome::parked;
    ok += status == kl::outcome::ok;
  }
  CHECK(parked == 1);
  CHECK(ok == 1);
  CHECK(stats.state_load_failures == 0); // the read worked; the decode not
  auto parked_keys = std::find_if(outs.begin(), outs.end(), [](auto& o) {
    return o.first == kl::outcome::parked;
  });
  REQUIRE(parked_keys != outs.end());
  CHECK_THAT(parked_keys->second,
             Catch::Contains("the state of key 9 could not be loaded")
               && Catch::Contains("state_store_failed"));
}

TEST_CASE("an answer that arrives after its attempt timed out does not change "
          "the state the retry starts from", "[state][timeout]") {
  temp_dir dir;
  auto s = state_settings(kl::state_backend::memory, dir.path);
  s.attempt_timeout_ms = 40;
  // Attempts time out until the slow answer is out of the way; then the
  // one running gets its quick answer. Enough of them for a slow machine.
  s.max_attempts = 50;
  // A database whose first answer for each value is slow (past the
  // attempt's timeout) and whose later ones are quick.
  // (The delay is an argument: CAF 0.17 spawns a function actor without
  // arguments through a null tuple pointer, which UBSan reports.)
  auto db_behavior = [](caf::blocking_actor* self, int slow_ms) {
    std::set<int> seen;
    bool running = true;
    self->receive_while([&] { return running; })(
      [&](int v) {
        if (seen.insert(v).second)
          std::this_thread::sleep_for(std::chrono::milliseconds(slow_ms));
        return v;
      },
      [&](caf::exit_msg&) { running = false; });
  };
  struct asking : kl::stateful_handler<uint64_t, uint64_t, fold> {
    explicit asking(caf::actor d) : db(std::move(d)) {}
    caf::actor db;
    void on_event(uint64_t& v, kl::completion<uint64_t> done) override {
      auto p = std::make_shared<kl::completion<uint64_t>>(std::move(done));
      self()->request(db, 5s, static_cast<int>(v)).then(
        [this, p](int x) {
          state().apply(static_cast<uint64_t>(x)); // once per event, or not
          p->ok(state().count);
        },
        [p](caf::error& err) { p->fail(caf::to_string(err)); });
    }
  };
  std::mutex mtx;
  std::vector<uint64_t> counts;
  auto db = std::make_shared<caf::actor>();
  auto rt = rt_type::start(
    s,
    [db](const kl::handler_params&) { return std::make_unique<asking>(*db); },
    [&](rt_type::event_type& ev) {
      std::lock_guard<std::mutex> guard{mtx};
      counts.push_back(ev.status == kl::outcome::ok ? *ev.result : 0);
    });
  REQUIRE(rt);
  *db = (*rt)->system().spawn<caf::detached>(db_behavior, 120);
  for (uint64_t v = 1; v <= 3; ++v)
    REQUIRE((*rt)->submit(kl::key{"acct"}, uint64_t{v}));
  REQUIRE((*rt)->drain(20s));
  // The slow answers came while later attempts waited or ran: had their
  // handlers run, counts would run ahead of the events.
  std::this_thread::sleep_for(200ms);
  REQUIRE((*rt)->submit(kl::key{"acct"}, uint64_t{4}));
  REQUIRE((*rt)->drain(20s));
  caf::anon_send_exit(*db, caf::exit_reason::user_shutdown);
  (*rt)->stop();
  std::lock_guard<std::mutex> guard{mtx};
  CHECK(counts == std::vector<uint64_t>{1, 2, 3, 4});
}
