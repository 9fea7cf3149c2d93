// SPDX-License-Identifier: Apache-2.0
#pragma once

// Workloads and a checking handler for the property tests: random keyed
// events with random latencies and fates (retryable ones among them), a
// handler that records every breach of the runtime's invariants it can
// observe from the inside, and a watchdog that turns a stalled run into a
// failure with a message instead of a hang.

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <memory>
#include <mutex>
#include <random>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <keylane/handler.hpp>

#include "watchdog.hpp"

namespace keylane::test {

/// What the handler does with an event. `fail` and `raise` do it on every
/// attempt; `transient` fails its first `fail_first` attempts and then
/// succeeds; `permanent` fails for good at once (no retry); `slow` lets its
/// first attempt time out and completes it late with a wrong result (which
/// must be ignored) while the retry runs, which then succeeds.
enum class fate : uint8_t { ok, skip, fail, raise, transient, permanent, slow };

/// The result a late completion of a timed-out attempt carries: never the
/// expected one, so applying it shows at the output.
inline constexpr uint64_t stale_result = ~uint64_t{0};

/// A test payload that counts live instances (rigtorp's TestType habit),
/// so a leak or a double destruction shows.
struct payload {
  static inline std::atomic<int64_t> live{0};
  static constexpr uint32_t alive_mark = 0xA11CEu;

  uint32_t key_id = 0;
  uint32_t producer = 0;
  uint64_t index = 0;      // position in its producer's sequence
  uint32_t latency_us = 0; // 0: completes inside on_event
  fate what = fate::ok;
  uint32_t fail_first = 0; // fate::transient: attempts that fail first
  uint32_t tries = 0;      // attempts the handler saw (it counts them)
  uint32_t mark = alive_mark;

  payload() { ++live; }
  payload(const payload& x) { assign(x); ++live; }
  payload(payload&& x) noexcept { assign(x); ++live; }
  payload& operator=(const payload& x) { assign(x); return *this; }
  payload& operator=(payload&& x) noexcept { assign(x); return *this; }
  ~payload() {
    if (mark != alive_mark)
      std::abort(); // destroyed twice
    mark = 0;
    --live;
  }

private:
  void assign(const payload& x) {
    key_id = x.key_id;
    producer = x.producer;
    index = x.index;
    latency_us = x.latency_us;
    what = x.what;
    fail_first = x.fail_first;
    tries = x.tries;
  }
};

/// The result the handler computes for an ok event, checked at the output.
inline uint64_t expected_result(const payload& p) {
  return p.index * 7 + p.key_id;
}

/// Raises `target` to at least `x`.
inline void raise_max(std::atomic<int64_t>& target, int64_t x) {
  auto cur = target.load();
  while (cur < x && !target.compare_exchange_weak(cur, x)) {
  }
}

/// Shared observations of all handler instances of one run.
struct observer {
  explicit observer(size_t keys, size_t producers)
    : busy(keys), incarnations(keys), last_index(keys * producers),
      producers(producers) {
    for (auto& x : last_index)
      x = -1;
  }
  std::vector<std::atomic<bool>> busy;          // a key's event is running
  std::vector<std::atomic<int>> incarnations;   // activated, not retired
  std::vector<std::atomic<int64_t>> last_index; // per key and producer
  size_t producers;
  std::atomic<int64_t> live_handlers{0};
  std::atomic<int64_t> peak_handlers{0};
  std::atomic<uint64_t> overlap{0};       // two events of a key at once
  std::atomic<uint64_t> out_of_order{0};  // a key's events started out of order
  std::atomic<uint64_t> double_active{0}; // two lanes of a key at once
  std::atomic<uint64_t> invocations{0};   // attempts, retries included
  std::atomic<uint64_t> events{0};        // first attempts

  // Late completions of timed-out attempts still to come: the runtime must
  // outlive them (a completion may not outlive its runtime).
  std::mutex late_mtx;
  std::condition_variable late_cv;
  size_t late_pending = 0;

  void late_begin() {
    std::lock_guard<std::mutex> guard{late_mtx};
    ++late_pending;
  }
  void late_end() {
    { std::lock_guard<std::mutex> guard{late_mtx}; --late_pending; }
    late_cv.notify_all();
  }
  /// Waits until every late completion ran; false after `limit`.
  [[nodiscard]] bool wait_late(std::chrono::milliseconds limit) {
    std::unique_lock<std::mutex> guard{late_mtx};
    return late_cv.wait_for(guard, limit, [this] { return late_pending == 0; });
  }
};

/// Checks order and exclusivity from inside, completes per the fate, now
/// or after `latency_us` (from a lane timer, or every third time from a
/// thread of its own).
class checking_handler : public handler<payload, uint64_t> {
public:
  /// `timeout_ms`: the runtime's `attempt_timeout_ms`, which the first
  /// attempt of a `fate::slow` event exceeds.
  explicit checking_handler(observer* obs, size_t timeout_ms = 0)
    : obs_(obs), timeout_ms_(timeout_ms) {
    raise_max(obs_->peak_handlers, ++obs_->live_handlers);
  }
  ~checking_handler() override { --obs_->live_handlers; }

  void on_activate(const key& k) override {
    if (++obs_->incarnations[k.integer()] != 1)
      ++obs_->double_active;
  }

  void on_retire(const key& k) override { --obs_->incarnations[k.integer()]; }

  void on_event(payload& p, completion<uint64_t> done) override {
    ++obs_->invocations;
    auto attempt = ++p.tries;
    if (attempt == 1)
      ++obs_->events;
    if (obs_->busy[p.key_id].exchange(true))
      ++obs_->overlap;
    // A retry repeats its own index; anything else must be new.
    auto& last = obs_->last_index[p.key_id * obs_->producers + p.producer];
    auto idx = static_cast<int64_t>(p.index);
    if (idx < last.load() || (idx == last.load() && attempt == 1))
      ++obs_->out_of_order;
    last = idx;
    plan x{p.key_id, p.what, expected_result(p)};
    switch (p.what) {
      case fate::transient:
        x.what = attempt <= p.fail_first ? fate::fail : fate::ok;
        break;
      case fate::slow:
        if (attempt == 1) {
          start_late(x, std::move(done));
          return;
        }
        // The retry is still running when the late completion comes, so
        // applying that one would show as a wrong result.
        x.what = fate::ok;
        {
          auto shared = std::make_shared<completion<uint64_t>>(std::move(done));
          run_later(2 * late_by, [this, shared, x] {
            finish(x, std::move(*shared), true);
          });
        }
        return;
      default: break;
    }
    if (p.latency_us == 0) {
      finish(x, std::move(done), true);
      return;
    }
    auto shared = std::make_shared<completion<uint64_t>>(std::move(done));
    auto delay = std::chrono::microseconds(p.latency_us);
    if (p.index % 3 == 0) {
      std::thread{[this, shared, x, delay] {
        std::this_thread::sleep_for(delay);
        finish(x, std::move(*shared), false);
      }}.detach();
    } else {
      run_later(delay,
                [this, shared, x] { finish(x, std::move(*shared), true); });
    }
  }

  /// How long a slow first attempt takes beyond the attempt timeout.
  static constexpr auto late_by = std::chrono::milliseconds(60);

private:
  struct plan {
    uint32_t key_id;
    fate what;
    uint64_t result;
  };

  // The attempt is given up on by the runtime (its timeout); for the
  // observer it ends now, so the retry does not count as an overlap. Its
  // completion comes late, with a wrong result, from a thread of our own.
  void start_late(plan x, completion<uint64_t> done) {
    obs_->busy[x.key_id] = false;
    obs_->late_begin();
    auto shared = std::make_shared<completion<uint64_t>>(std::move(done));
    auto wait = std::chrono::milliseconds(timeout_ms_) + late_by;
    auto* obs = obs_;
    std::thread{[obs, shared, wait] {
      std::this_thread::sleep_for(wait);
      shared->ok(stale_result);
      obs->late_end();
    }}.detach();
  }

  // `may_throw` is false on threads of our own, where a throw would end
  // the process: there the completion is dropped instead, which fails the
  // event just the same.
  void finish(plan x, completion<uint64_t> done, bool may_throw) {
    obs_->busy[x.key_id] = false; // before done: the next may start at once
    switch (x.what) {
      case fate::ok: done.ok(x.result); break;
      case fate::skip: done.skip(); break;
      case fate::fail: done.fail("injected failure"); break;
      case fate::permanent: done.fail_permanently("injected permanent failure"); break;
      case fate::raise:
        if (may_throw)
          throw std::runtime_error("injected exception");
        break;
      default: done.fail("unplanned fate"); break;
    }
  }

  observer* obs_;
  size_t timeout_ms_;
};

/// Builds a workload: `n` events over `keys` keys (key 0 takes half),
/// spread over `producers`; latencies and fates drawn from `seed`. With
/// `max_attempts` > 1 some events fail transiently (and succeed on a later
/// attempt), some fail permanently, and with `slow` set a few cold-key
/// events let their first attempt time out.
inline std::vector<std::vector<payload>>
make_workload(uint64_t seed, size_t n, size_t keys, size_t producers,
              uint32_t max_latency_us, uint32_t max_attempts = 1,
              bool slow = false) {
  std::mt19937_64 rng{seed};
  std::uniform_int_distribution<uint32_t> cold(1, static_cast<uint32_t>(keys - 1));
  std::uniform_int_distribution<uint32_t> lat(1, max_latency_us);
  std::uniform_int_distribution<int> pct(0, 99);
  std::vector<std::vector<payload>> out(producers);
  for (size_t i = 0; i < n; ++i) {
    auto prod = static_cast<uint32_t>(rng() % producers);
    payload p;
    p.key_id = pct(rng) < 50 ? 0 : cold(rng);
    p.producer = prod;
    p.index = out[prod].size();
    p.latency_us = pct(rng) < 50 ? 0 : lat(rng);
    auto f = pct(rng);
    p.what = f < 88 ? fate::ok : f < 93 ? fate::skip : f < 97 ? fate::fail
                                                              : fate::raise;
    if (max_attempts > 1 && p.what == fate::ok) {
      // Of the ok ones: 4 % transient, 1 % permanent, 1 in 4000 slow.
      auto g = rng() % 4000;
      if (g < 160) {
        p.what = fate::transient;
        p.fail_first = 1 + static_cast<uint32_t>(rng() % (max_attempts - 1));
      } else if (g < 200) {
        p.what = fate::permanent;
      } else if (slow && g == 200 && p.key_id != 0) {
        p.what = fate::slow;
      }
    }
    out[prod].push_back(p);
  }
  return out;
}

/// The seed for this run: $KEYLANE_SEED if set, random otherwise.
inline uint64_t test_seed() {
  if (auto* s = std::getenv("KEYLANE_SEED"))
    return std::strtoull(s, nullptr, 10);
  return std::random_device{}();
}

} // namespace keylane::test
