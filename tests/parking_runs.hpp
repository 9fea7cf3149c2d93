// SPDX-License-Identifier: Apache-2.0
#pragma once

// Whole scenarios: settings, workloads, replay and heal steps.

#include "parking_checks.hpp"

namespace parking_support {

inline settings fault_settings(order_mode order) {
  settings s;
  s.threads = 2;
  s.order = order;
  s.max_attempts = 3;
  s.initial_backoff_ms = 1;
  s.backoff_multiplier = 2.0;
  s.max_backoff_ms = 4;
  // Long enough that no planned success (< 1 ms) times out on a loaded
  // machine; only the planned hangs do.
  s.attempt_timeout_ms = 150;
  return s;
}

// Keys drawn uniformly, with key 0 taking a quarter of the traffic.
inline auto some_hot_key(size_t keys) {
  return [keys](std::mt19937_64& rng) {
    return rng() % 4 == 0 ? 0 : rng() % keys;
  };
}

// Heals a random share of the faulty events of `ids`.
inline void heal_some(scenario& sc, const std::vector<uint64_t>& ids, int pct) {
  for (auto id : ids)
    if (sc.table.faulty(id) && static_cast<int>(sc.rng() % 100) < pct)
      sc.table.heal(id);
}

// Replays a share of the parked keys, each from one of several threads that
// submits the key's newer events right after its replay call, while the
// same threads send new events for the other keys. Before that, heals
// `heal_pct` percent of the faulty parked events of the replayed keys,
// except for the first replayed key when `refail_first` is set: its first
// parked event fails for good again. Returns how many keys were replayed.
inline size_t replay_phase(harness& h, int replay_pct, int heal_pct,
                    const fault_mix& mix, size_t threads,
                    bool refail_first = false) {
  auto& sc = h.sc;
  phase ph{sc.keys};
  ph.log_begin = h.log.size();
  std::vector<bool> replaying(sc.keys, false);
  std::vector<std::vector<uint64_t>> old(sc.keys);
  size_t replayed_keys = 0;
  for (auto k : sc.m.parked_keys()) {
    if (static_cast<int>(sc.rng() % 100) < replay_pct) {
      if (!(refail_first && replayed_keys == 0))
        heal_some(sc, sc.m.parked(k), heal_pct);
      ++replayed_keys;
      replaying[k] = true;
      old[k] = sc.m.take_parked(k);
      for (auto id : old[k]) {
        sc.table.rearm(id);
        ph.replayed.insert(id);
      }
    }
  }
  // Newer events: every replayed key gets some, other keys maybe.
  std::vector<std::vector<item>> newer(sc.keys);
  for (uint32_t k = 0; k < sc.keys; ++k) {
    auto n = replaying[k] ? 1 + sc.rng() % 3 : sc.rng() % 3;
    auto made = sc.make_items(n, 1, mix, [k](auto&) { return k; });
    newer[k] = std::move(made[0]);
  }
  std::vector<caf::expected<uint64_t>> returned(sc.keys, uint64_t{0});
  std::atomic<uint64_t> rejected{0};
  std::vector<std::thread> workers;
  for (size_t t = 0; t < threads; ++t)
    workers.emplace_back([&, t] {
      for (uint32_t k = static_cast<uint32_t>(t); k < sc.keys;
           k += static_cast<uint32_t>(threads)) {
        if (replaying[k])
          returned[k] = h.rt->replay(sc.key_of(k));
        for (auto& x : newer[k]) {
          auto res = h.rt->submit(sc.key_of(k), x);
          if (!res) {
            ++rejected;
            continue;
          }
          sc.submit_seq.at(x.id) = res.seq();
        }
      }
    });
  for (auto& w : workers)
    w.join();
  REQUIRE(rejected == 0);
  size_t expected = ph.log_begin;
  problems replays;
  for (uint32_t k = 0; k < sc.keys; ++k) {
    expected += newer[k].size();
    if (!replaying[k])
      continue;
    if (!returned[k]) {
      replays.add("replay(", k, ") failed: ", render(returned[k].error()));
      continue;
    }
    if (*returned[k] != old[k].size())
      replays.add("replay(", k, ") returned ", *returned[k], ", ",
                  old[k].size(), " were parked");
    h.replayed += *returned[k];
    expected += old[k].size();
  }
  CHECK_NO_PROBLEMS(replays);
  std::vector<std::vector<item>> lists;
  for (auto& v : newer)
    lists.push_back(v);
  // The threads above submitted these: count them for the stats check.
  h.add_submitted(lists);
  h.drain(expected);
  auto order = by_key_in_seq_order(sc, lists);
  for (uint32_t k = 0; k < sc.keys; ++k) {
    auto ids = old[k];
    ids.insert(ids.end(), order[k].begin(), order[k].end());
    sc.m.run(k, ids, ph);
  }
  check_phase(h, ph);
  return replayed_keys;
}



inline fault_mix healthy_mix() {
  fault_mix m;
  m.transient = 0;
  m.exhausting = 0;
  m.permanent = 0;
  m.hangs = false;
  return m;
}

inline void heal_all(scenario& sc) {
  for (uint64_t id = 0; id < sc.table.size(); ++id)
    sc.table.heal(id);
}

inline std::string describe(const settings& s, bool pull) {
  return std::string{"order="} + to_string(s.order) + " window="
         + (s.window == unbounded ? std::string{"unbounded"}
                                  : std::to_string(s.window))
         + " max_active_keys=" + std::to_string(s.max_active_keys)
         + " jitter=" + to_string(s.jitter) + " park=" + to_string(s.park)
         + (pull ? " pull" : " callback");
}

struct variant {
  order_mode order;
  size_t window;
  size_t cap;
  jitter_mode jitter;
  bool pull;
  // In global order a hang holds up the sink for its timeout; with a small
  // window the producers wait for it too, so fewer hangs keep runs short.
  int hang_share = 10;
};

inline settings variant_settings(const variant& v) {
  auto s = fault_settings(v.order);
  s.window = v.window;
  s.max_active_keys = v.cap;
  s.jitter = v.jitter;
  return s;
}

const variant property_variants[] = {
  {order_mode::per_key, unbounded, 1024, jitter_mode::none, false},
  {order_mode::global, 32, 16, jitter_mode::full, false, 4},
  {order_mode::global, unbounded, 1024, jitter_mode::none, true},
  {order_mode::none, unbounded, 8, jitter_mode::full, true},
};

inline void run_property(uint64_t base_seed, size_t events, size_t keys) {
  auto live_before = item::live.load();
  uint64_t i = 0;
  for (auto& v : property_variants) {
    auto seed = base_seed + i++;
    auto cfg = variant_settings(v);
    INFO("seed " << seed << " = KEYLANE_SEED " << base_seed << " + " << i - 1
                 << " (rerun with KEYLANE_SEED=" << base_seed << "), "
                 << describe(cfg, v.pull));
    scenario sc{cfg, keys, events + 16, seed};
    harness h{sc, v.pull};
    fault_mix mix;
    mix.hang_share = v.hang_share;
    run_phase(h, sc.make_items(events, 3, mix, some_hot_key(keys)));
    CHECK_FALSE(sc.m.parked_keys().empty()); // the run did park something
    h.shutdown(true);
  }
  CHECK(item::live.load() == live_before);
}

inline void run_replay_property(uint64_t base_seed, size_t events, size_t keys) {
  auto live_before = item::live.load();
  const variant variants[] = {
    {order_mode::per_key, unbounded, 1024, jitter_mode::none, false},
    {order_mode::global, 64, 16, jitter_mode::full, true, 4},
  };
  uint64_t i = 0;
  for (auto& v : variants) {
    auto seed = base_seed + i++;
    auto cfg = variant_settings(v);
    INFO("seed " << seed << " = KEYLANE_SEED " << base_seed << " + " << i - 1
                 << " (rerun with KEYLANE_SEED=" << base_seed << "), "
                 << describe(cfg, v.pull));
    scenario sc{cfg, keys, events * 2 + 16 * keys, seed};
    harness h{sc, v.pull};
    fault_mix mix;
    mix.hang_share = v.hang_share;
    {
      INFO("first run");
      run_phase(h, sc.make_items(events, 3, mix, some_hot_key(keys)));
    }
    REQUIRE_FALSE(sc.m.parked_keys().empty());
    {
      INFO("replay of most parked keys after healing some of their faults, "
           "the first replayed key not healed");
      CHECK(replay_phase(h, 75, 60, mix, 3, true) > 0);
    }
    {
      INFO("replay of every parked key after healing every fault");
      heal_all(sc);
      replay_phase(h, 100, 100, healthy_mix(), 2);
      CHECK(sc.m.parked_keys().empty());
      auto left = h.rt->parked_keys();
      REQUIRE(left);
      CHECK(left->empty());
    }
    h.shutdown(true);
  }
  CHECK(item::live.load() == live_before);
}


} // namespace parking_support
