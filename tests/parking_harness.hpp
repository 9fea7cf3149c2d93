// SPDX-License-Identifier: Apache-2.0
#pragma once

// One runtime under fault injection, and the state its scenario shares.

#include "parking_model.hpp"
#include "watchdog.hpp"

namespace parking_support {

// -- state shared by the runtimes of one scenario ----------------------------

struct scenario {
  scenario(settings s, size_t keys, size_t capacity, uint64_t seed)
    : cfg(std::move(s)), keys(keys), table(capacity),
      m(table, keys, cfg), submit_seq(capacity, ~uint64_t{0}), rng(seed) {}
  settings cfg;
  size_t keys;
  fault_table table;
  model m;
  // The seq `submit` returned for each id (written by producer threads for
  // distinct ids, read after they joined).
  std::vector<uint64_t> submit_seq;
  // The parked tombstones of each id, oldest first, over every runtime of
  // the scenario: the park store must describe the event as one of them.
  std::map<uint64_t, std::vector<output>> parked_history;
  std::mt19937_64 rng;
  bool string_keys = false;

  [[nodiscard]] key key_of(uint32_t k) const {
    return string_keys ? key{"acct-" + std::to_string(k)} : key{uint64_t{k}};
  }

  // `n` new items with plans drawn from `mix`, spread over `producers`
  // lists, on the keys `pick` chooses.
  template <class Pick>
  std::vector<std::vector<item>> make_items(size_t n, size_t producers,
                                            const fault_mix& mix, Pick pick) {
    std::vector<std::vector<item>> out(producers);
    for (size_t i = 0; i < n; ++i) {
      auto k = static_cast<uint32_t>(pick(rng));
      auto prod = static_cast<uint32_t>(rng() % producers);
      auto id = table.add(
        random_plan(rng, mix, static_cast<uint32_t>(cfg.max_attempts)));
      out[prod].emplace_back(id, k, prod);
    }
    return out;
  }
};

// -- one runtime --------------------------------------------------------------

class harness {
public:
  harness(scenario& s, bool pull) : sc(s), jr(s.keys) {
    handler_factory make = [this](const handler_params&) {
      return std::make_unique<fault_handler>(&sc.table, &jr, &late,
                                             sc.cfg.attempt_timeout_ms);
    };
    rt_type::callback cb;
    if (!pull)
      cb = [this](ev_type& e) { note(e); };
    auto started = rt_type::start(sc.cfg, make, cb);
    if (!started)
      FAIL("start failed: " << render(started.error()));
    rt = std::move(*started);
    pull_ = pull;
    if (pull) {
      pulling_ = true;
      puller_ = std::thread{[this] {
        while (pulling_) {
          std::unique_ptr<ev_type> e;
          if (rt->pull(e, 20ms))
            note(*e);
        }
      }};
    }
  }

  ~harness() { shutdown(); }

  // Stops the runtime; checks the stop report when `check` is set.
  void shutdown(bool check = false) {
    if (!rt)
      return;
    if (puller_.joinable()) {
      pulling_ = false;
      puller_.join();
    }
    auto report = rt->stop();
    late.shutdown(); // while the actor system still exists
    rt.reset();
    if (check) {
      CHECK(report.unfinished.empty());
      CHECK(report.delivered == log.size());
    }
  }

  // Submits `lists[p]` from producer thread p, each list in order.
  void submit(const std::vector<std::vector<item>>& lists) {
    std::atomic<uint64_t> rejected{0};
    std::atomic<uint64_t> accepted{0};
    // A producer blocked on a full window that never frees fails the run
    // with this message instead of hanging.
    keylane::test::watchdog dog{
      "the parking harness's producers to submit (accepted and outputs "
      "counted as progress)",
      [&] { return accepted.load() + log.size(); }};
    std::vector<std::thread> producers;
    for (auto& list : lists)
      producers.emplace_back([&] {
        for (auto& x : list) {
          auto res = rt->submit(sc.key_of(x.key_id), x);
          if (!res) {
            ++rejected;
            continue;
          }
          ++accepted;
          sc.submit_seq.at(x.id) = res.seq();
        }
      });
    for (auto& t : producers)
      t.join();
    REQUIRE(rejected == 0);
    add_submitted(lists);
  }

  // Waits until `expected` outputs came out in total.
  void drain(size_t expected) {
    keylane::test::watchdog dog{
      "the parking harness's drain to " + std::to_string(expected)
        + " outputs",
      [this] { return log.size(); },
      [this] { return std::to_string(log.size()) + " outputs so far"; }};
    auto drained = rt->drain(wait_limit);
    // Read once, right at drain's return: with a callback, delivery is the
    // callback's return, so drain must not return before every output was
    // seen, and the message must show the count that was checked.
    auto at_drain = log.size();
    INFO("outputs seen when drain returned: " << at_drain << " of "
                                              << expected);
    REQUIRE(drained);
    if (!pull_)
      CHECK(at_drain == expected);
    // Pulled events are counted delivered as `pull` returns, before the
    // puller logs them: wait for the log itself.
    REQUIRE(log.wait_for(expected, wait_limit));
    auto logged = log.size();
    CHECK(logged == expected);
  }

  // Counts events submitted outside `submit` (by replay_phase's threads).
  void add_submitted(const std::vector<std::vector<item>>& lists) {
    for (auto& list : lists)
      submitted_ += list.size();
  }

  [[nodiscard]] size_t submitted() const noexcept { return submitted_; }

  scenario& sc;
  journal jr;
  completer late;
  output_log log;
  std::unique_ptr<rt_type> rt;
  uint64_t replayed = 0;

private:
  void note(const ev_type& e) {
    log.take(e);
    sc.table.note_output(e.payload.id);
    late.poke();
  }

  bool pull_ = false;
  std::atomic<bool> pulling_{false};
  std::thread puller_;
  size_t submitted_ = 0;
};

// Lane order for a batch of new items: by the seq `submit` returned.
inline std::vector<std::vector<uint64_t>>
by_key_in_seq_order(const scenario& sc,
                    const std::vector<std::vector<item>>& lists) {
  std::vector<std::vector<uint64_t>> out(sc.keys);
  for (auto& list : lists)
    for (auto& x : list)
      out[x.key_id].push_back(x.id);
  for (auto& v : out)
    std::sort(v.begin(), v.end(), [&sc](uint64_t a, uint64_t b) {
      return sc.submit_seq.at(a) < sc.submit_seq.at(b);
    });
  return out;
}


} // namespace parking_support
