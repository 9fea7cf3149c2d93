// SPDX-License-Identifier: Apache-2.0
// Parking under random failure injection: random keyed workloads from
// several producer threads, each event with a fault plan (success, skip,
// transient failures that heal after k attempts, permanent failures,
// exceptions, dropped completions, timeouts with late completions), checked
// against a model of what the runtime must do: per-key order of attempts
// and outputs, exactly-once accounting, exact attempt counts, the parked
// suffix of each key, backoff bounds, replay, discard, durability across a
// restart and `park = none`.

#include <catch2/catch.hpp>

#include "parking_runs.hpp"

using namespace parking_support;


TEST_CASE("under random failures a key's events run and come out in "
          "submission order, each ends exactly once with exact attempts, "
          "and a key parks from its first final failure on",
          "[parking][property]") {
  run_property(fault_seed(), 1200, 48);
}

TEST_CASE("retry delays keep their bounds: at least the capped exponential "
          "delay without jitter, within [0, cap] with full jitter",
          "[parking][backoff]") {
  auto seed = fault_seed();
  INFO("seed " << seed << " (rerun with KEYLANE_SEED=" << seed << ")");
  auto live_before = item::live.load();
  fault_mix mix;
  mix.skip = 5;
  mix.transient = 60;
  mix.exhausting = 10;
  mix.permanent = 5;
  mix.async = 30;
  mix.hangs = false;
  // Upper slack: bounds that must hold on a loaded machine, not speed.
  const auto slack = std::chrono::duration<double, std::milli>(5000);
  SECTION("without jitter every delay is at least the capped exponential "
          "delay") {
    auto cfg = fault_settings(order_mode::per_key);
    cfg.max_attempts = 5;
    cfg.initial_backoff_ms = 4;
    cfg.backoff_multiplier = 2.0;
    cfg.max_backoff_ms = 20;
    cfg.attempt_timeout_ms = 0;
    cfg.jitter = jitter_mode::none;
    scenario sc{cfg, 12, 128, seed};
    harness h{sc, false};
    auto gaps = run_phase(h, sc.make_items(72, 3, mix, [](auto& rng) {
                            return rng() % 12;
                          }));
    REQUIRE(gaps.size() >= 20);
    problems p;
    bool capped = false;
    for (auto& g : gaps) {
      // The lower bound is checked by run_phase.
      if (g.gap > g.cap + slack)
        p.add("id ", g.id, ": ", g.gap.count(), " ms after failure ",
              g.failed, ", cap ", g.cap.count(), " ms");
      capped |= g.failed >= 4; // 4 * 2^3 = 32 > 20: the cap applied
    }
    CHECK(capped);
    CHECK_NO_PROBLEMS(p);
    h.shutdown(true);
  }
  SECTION("with full jitter every delay lies within [0, cap], and not all "
          "of them near the cap") {
    auto cfg = fault_settings(order_mode::per_key);
    cfg.max_attempts = 5;
    cfg.initial_backoff_ms = 10;
    cfg.backoff_multiplier = 2.5;
    cfg.max_backoff_ms = 40;
    cfg.attempt_timeout_ms = 0;
    cfg.jitter = jitter_mode::full;
    scenario sc{cfg, 12, 128, seed};
    harness h{sc, false};
    auto gaps = run_phase(h, sc.make_items(72, 3, mix, [](auto& rng) {
                            return rng() % 12;
                          }));
    REQUIRE(gaps.size() >= 20);
    problems p;
    size_t low = 0;
    for (auto& g : gaps) {
      if (g.gap > g.cap + slack)
        p.add("id ", g.id, ": ", g.gap.count(), " ms after failure ",
              g.failed, ", cap ", g.cap.count(), " ms");
      // A gap well below the cap cannot come from a slow machine: only
      // from a draw below the cap.
      low += g.gap < g.cap / 2;
    }
    CHECK_NO_PROBLEMS(p);
    INFO(gaps.size() << " gaps, " << low << " below half their cap");
    CHECK(low > 0);
    h.shutdown(true);
  }
  CHECK(item::live.load() == live_before);
}

TEST_CASE("replay runs a key's parked events in their order ahead of newer "
          "events, and one that fails for good again stays parked with those "
          "behind it",
          "[parking][replay][property]") {
  run_replay_property(fault_seed(), 900, 40);
}

TEST_CASE("discard drops a key's parked events, returns how many, and the "
          "key's newer events run",
          "[parking][discard]") {
  auto seed = fault_seed();
  INFO("seed " << seed << " (rerun with KEYLANE_SEED=" << seed << ")");
  auto live_before = item::live.load();
  {
    auto cfg = fault_settings(order_mode::per_key);
    const size_t keys = 32;
    scenario sc{cfg, keys, 1024, seed};
    harness h{sc, false};
    run_phase(h, sc.make_items(600, 3, fault_mix{}, some_hot_key(keys)));
    auto parked = sc.m.parked_keys();
    REQUIRE(parked.size() >= 2);
    problems p;
    size_t discarded = 0;
    for (size_t i = 0; i < parked.size(); i += 2) {
      auto k = parked[i];
      auto want = sc.m.take_parked(k).size();
      auto n = h.rt->discard(sc.key_of(k));
      if (!n)
        p.add("discard(", k, ") failed: ", render(n.error()));
      else if (*n != want)
        p.add("discard(", k, ") returned ", *n, ", ", want, " were parked");
      ++discarded;
    }
    CHECK_NO_PROBLEMS(p);
    // Keys that were never parked: nothing to discard or replay.
    for (uint32_t k = 0; k < keys; ++k) {
      if (!sc.m.parked(k).empty())
        continue;
      auto events = h.rt->parked_events(sc.key_of(k));
      REQUIRE(events);
      if (!events->empty())
        continue; // a discarded key; its newer events are checked below
      auto d = h.rt->discard(sc.key_of(k));
      REQUIRE(d);
      CHECK(*d == 0);
    }
    auto r = h.rt->replay(key{"never-seen"});
    REQUIRE(r);
    CHECK(*r == 0);
    // Newer events of every key: discarded keys run them, keys still
    // parked park them behind.
    INFO(discarded << " keys discarded");
    run_phase(h, sc.make_items(3 * keys, 2, healthy_mix(),
                               [keys](auto& rng) { return rng() % keys; }));
    h.shutdown(true);
  }
  CHECK(item::live.load() == live_before);
}

