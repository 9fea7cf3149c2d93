// SPDX-License-Identifier: Apache-2.0
// Events whose payload travels to a live lane by value (an integer key and
// a small trivially copyable payload: runtime::payload_by_value) reach
// their handler and the application with their own key, payload and
// sequence number, in per-key order, while lanes start and retire under a
// small cap; and a stop lists the ones still in a shard's inbox under
// their keys.

#include <catch2/catch.hpp>

#include <array>
#include <atomic>
#include <chrono>
#include <map>
#include <mutex>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "keylane/runtime.hpp"
#include "property_support.hpp"
#include "stop_accounting.hpp"

namespace kl = keylane;
using namespace std::chrono_literals;

namespace {

// 24 bytes: the largest payload that travels by value.
struct order_item {
  uint64_t key_copy = 0; // the key it was submitted under
  uint64_t index = 0;    // its position among its key's events
  uint64_t salt = 0;
};

using rt_type = kl::runtime<order_item, uint64_t>;

static_assert(rt_type::payload_by_value);
static_assert(!kl::runtime<std::string, uint64_t>::payload_by_value);
static_assert(!kl::runtime<std::array<uint64_t, 4>, uint64_t>::payload_by_value);

// Notes an error unless `it` is the next of its key in `next` (each key's
// next index), then moves the key on.
void check_next(std::map<uint64_t, uint64_t>& next, const order_item& it,
                const char* what, std::vector<std::string>& errors) {
  auto& n = next[it.key_copy];
  if (it.index != n)
    errors.push_back("key " + std::to_string(it.key_copy) + ": " + what + " "
                     + std::to_string(it.index) + " where "
                     + std::to_string(n) + " was due");
  n = it.index + 1;
}

// Checks, on the lane, that each key's events come with its key and in
// order; completes every third one from a timer, so lanes also wait.
struct checking : kl::handler<order_item, uint64_t> {
  checking(std::mutex& mtx, std::map<uint64_t, uint64_t>& next,
           std::vector<std::string>& errors)
    : mtx_(mtx), next_(next), errors_(errors) {}

  void on_event(order_item& it, kl::completion<uint64_t> done) override {
    {
      std::lock_guard<std::mutex> guard{mtx_};
      if (!current_key().is_integer()
          || current_key().integer() != it.key_copy)
        errors_.push_back("key " + current_key().to_string()
                          + " ran the event of key "
                          + std::to_string(it.key_copy));
      check_next(next_, it, "event", errors_);
    }
    auto result = it.index ^ it.salt;
    if (it.index % 3 == 2) {
      run_later(20us, [result, d = std::move(done)]() mutable {
        d.ok(result);
      });
      return;
    }
    done.ok(result);
  }

  std::mutex& mtx_;
  std::map<uint64_t, uint64_t>& next_;
  std::vector<std::string>& errors_;
};

void run_once(uint64_t seed, kl::order_mode order) {
  std::mt19937_64 rng{seed};
  kl::settings s;
  s.max_attempts = 1; // the default before 0.2.0
  s.threads = 2;
  s.order = order;
  s.max_active_keys = 1 + rng() % 8;
  s.lane_linger_ms = rng() % 2;
  s.window = 256;
  const uint64_t keys = 2 + rng() % 40;
  constexpr uint64_t per_producer = 3000;
  INFO("seed " << seed << " (rerun with KEYLANE_SEED=" << seed
               << "): order " << kl::to_string(order) << ", cap "
               << s.max_active_keys << ", linger " << s.lane_linger_ms
               << " ms, keys " << keys);
  std::mutex mtx;
  std::map<uint64_t, uint64_t> next_ran;
  std::vector<std::string> errors;
  std::map<uint64_t, uint64_t> next_out;
  std::set<uint64_t> out_seqs;
  // Each event's salt follows from its key and index, so an output can be
  // checked against what was submitted without waiting for `submit`.
  auto salt_of = [seed](uint64_t k, uint64_t index) {
    return keylane::stable_hash(seed ^ (k << 32) ^ index);
  };
  auto rt = rt_type::start(
    s,
    [&](const kl::handler_params&) {
      return std::make_unique<checking>(mtx, next_ran, errors);
    },
    [&](rt_type::event_type& ev) {
      std::lock_guard<std::mutex> guard{mtx};
      const auto& got = ev.payload;
      if (!out_seqs.insert(ev.seq).second)
        errors.push_back("seq " + std::to_string(ev.seq) + " came out twice");
      if (ev.key() != kl::key{got.key_copy}
          || got.salt != salt_of(got.key_copy, got.index))
        errors.push_back("seq " + std::to_string(ev.seq)
                         + " came out with another key or payload");
      if (ev.status != kl::outcome::ok || !ev.result
          || *ev.result != (got.index ^ got.salt))
        errors.push_back("seq " + std::to_string(ev.seq)
                         + " came out without its result");
      if (order != kl::order_mode::none) {
        check_next(next_out, got, "output", errors);
      }
    });
  REQUIRE(rt);
  // Each producer owns the keys of its parity: a key's events are
  // submitted from one thread, in index order.
  std::array<std::thread, 2> producers;
  std::array<std::vector<uint64_t>, 2> seqs;
  std::array<bool, 2> refused{false, false};
  for (uint64_t p = 0; p < producers.size(); ++p)
    producers[p] = std::thread{[&, p] {
      std::mt19937_64 local{seed + 1 + p};
      std::map<uint64_t, uint64_t> index;
      for (uint64_t i = 0; i < per_producer; ++i) {
        uint64_t k = (local() % ((keys + 1) / 2)) * 2 + p;
        if (k >= keys)
          k = p;
        auto n = index[k]++;
        auto r = (*rt)->submit(kl::key{k},
                               order_item{k, n, salt_of(k, n)});
        if (!r) { // Catch's checks are for the test's own thread
          refused[p] = true;
          return;
        }
        seqs[p].push_back(r.seq());
      }
    }};
  for (auto& t : producers)
    t.join();
  CHECK_FALSE(refused[0]);
  CHECK_FALSE(refused[1]);
  REQUIRE((*rt)->drain(30s));
  auto rep = (*rt)->stop();
  CHECK(rep.delivered == 2 * per_producer);
  std::lock_guard<std::mutex> guard{mtx};
  std::set<uint64_t> accepted{seqs[0].begin(), seqs[0].end()};
  accepted.insert(seqs[1].begin(), seqs[1].end());
  CHECK(accepted == out_seqs);
  INFO(errors.size() << " errors; the first: "
                     << (errors.empty() ? "" : errors.front()));
  CHECK(errors.empty());
}

} // namespace

TEST_CASE("events that travel by value keep their key, payload, result and "
          "per-key order while lanes start and retire",
          "[inbox][property]") {
  auto first = keylane::test::test_seed();
  const kl::order_mode orders[] = {kl::order_mode::none,
                                   kl::order_mode::per_key,
                                   kl::order_mode::global};
  for (uint64_t i = 0; i < 6; ++i)
    run_once(first + i, orders[i % 3]);
}

TEST_CASE("a stop lists the events still in a shard's inbox under their keys",
          "[inbox][stop]") {
  kl::settings s;
  s.max_attempts = 1; // the default before 0.2.0
  s.threads = 2;
  s.order = kl::order_mode::per_key;
  std::atomic<bool> first_running{false};
  std::atomic<bool> release{false};
  std::atomic<uint64_t> delivered_count{0};
  std::mutex mtx;
  std::set<uint64_t> delivered;
  struct blocking : kl::handler<order_item, uint64_t> {
    blocking(std::atomic<bool>& running, std::atomic<bool>& release)
      : running_(running), release_(release) {}
    void on_event(order_item& it, kl::completion<uint64_t> done) override {
      if (it.index == 0) {
        // Holds this shard's thread: what follows stays in its inbox.
        running_ = true;
        while (!release_)
          std::this_thread::sleep_for(1ms);
      }
      done.ok(it.index);
    }
    std::atomic<bool>& running_;
    std::atomic<bool>& release_;
  };
  auto rt = rt_type::start(
    s,
    [&](const kl::handler_params&) {
      return std::make_unique<blocking>(first_running, release);
    },
    [&](rt_type::event_type& ev) {
      std::lock_guard<std::mutex> guard{mtx};
      delivered.insert(ev.seq);
      ++delivered_count;
    });
  REQUIRE(rt);
  std::set<uint64_t> accepted;
  std::map<uint64_t, uint64_t> key_of;
  auto submit = [&](uint64_t k, uint64_t index) {
    auto r = (*rt)->submit(kl::key{k}, order_item{k, index, 0});
    REQUIRE(r);
    accepted.insert(r.seq());
    key_of[r.seq()] = k;
  };
  submit(7, 0);
  while (!first_running)
    std::this_thread::sleep_for(1ms);
  // Key 7's lane is live and its shard busy: these go by value.
  for (uint64_t i = 1; i <= 50; ++i)
    submit(7, i);
  std::thread releaser{[&] {
    std::this_thread::sleep_for(50ms);
    release = true;
  }};
  auto rep = (*rt)->stop();
  releaser.join();
  rt->reset();
  std::lock_guard<std::mutex> guard{mtx};
  keylane::test::check_accounted(rep, accepted, delivered);
  CHECK(rep.unfinished.size() + delivered.size() == accepted.size());
  for (const auto& u : rep.unfinished) {
    INFO("seq " << u.seq << ", stage " << u.stage);
    CHECK(u.key == kl::key{key_of[u.seq]});
  }
}
