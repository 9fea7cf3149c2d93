// SPDX-License-Identifier: Apache-2.0
#pragma once

// Pipeline test fixtures: a two-stage workload with random latencies and
// fates per stage, handlers that follow the script in the payload, and a
// running total per account kept in a store that lanes load and flush.

#include <atomic>
#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <random>
#include <stdexcept>
#include <vector>

#include <keylane/handler.hpp>

namespace keylane::test {

enum class step_fate : uint8_t { ok, skip, fail, raise };

/// One event's script: what each of the two stages does with it.
struct order_in {
  uint32_t key_id = 0;
  uint64_t index = 0; // position in its producer's sequence
  uint32_t producer = 0;
  uint32_t latency_us[2] = {0, 0};
  step_fate fate[2] = {step_fate::ok, step_fate::ok};
  int64_t amount = 0;
};

/// Stage 1's result: the script, carried on, and a value stage 2 extends.
struct order_mid {
  order_in in;
  uint64_t v = 0;
};

inline uint64_t stage1_value(const order_in& x) { return x.index * 3 + 1; }
inline uint64_t stage2_value(const order_mid& x) { return x.v * 5 + x.in.key_id; }

inline std::vector<order_in> make_orders(uint64_t seed, size_t n, size_t keys,
                                         size_t producers, int bad_percent) {
  std::mt19937_64 rng{seed};
  std::vector<order_in> out(n);
  std::vector<uint64_t> next(producers, 0);
  for (size_t i = 0; i < n; ++i) {
    auto& x = out[i];
    x.key_id = static_cast<uint32_t>(rng() % keys);
    x.producer = static_cast<uint32_t>(i % producers);
    x.index = next[x.producer]++;
    x.amount = static_cast<int64_t>(rng() % 201) - 100;
    for (int s = 0; s < 2; ++s) {
      // Mostly immediate, some short waits, a few long stragglers.
      auto r = rng() % 100;
      x.latency_us[s] = r < 50 ? 0 : r < 97 ? static_cast<uint32_t>(rng() % 500)
                                            : 5000 + static_cast<uint32_t>(rng() % 10000);
      auto f = static_cast<int>(rng() % 100);
      x.fate[s] = f >= bad_percent         ? step_fate::ok
                  : f < bad_percent / 3     ? step_fate::skip
                  : f < 2 * bad_percent / 3 ? step_fate::fail
                                            : step_fate::raise;
    }
  }
  return out;
}

/// Finishes `done` with `value` as the script's stage `s` says, after its
/// latency.
template <class H, class R>
void follow(H& self, const order_in& x, int s, R value, completion<R> done) {
  auto finish = [fate = x.fate[s], value = std::move(value)](completion<R>& d) {
    switch (fate) {
      case step_fate::ok: d.ok(value); break;
      case step_fate::skip: d.skip(); break;
      case step_fate::fail: d.fail("scripted failure"); break;
      case step_fate::raise: throw std::runtime_error("scripted throw");
    }
  };
  if (x.latency_us[s] == 0) {
    finish(done);
    return;
  }
  auto pending = std::make_shared<completion<R>>(std::move(done));
  self.later(std::chrono::microseconds{x.latency_us[s]},
             [pending, finish]() mutable {
               try {
                 finish(*pending);
               } catch (const std::exception& e) {
                 pending->fail(e.what());
               }
             });
}

class stage1_handler : public handler<order_in, order_mid> {
public:
  void on_event(order_in& x, completion<order_mid> done) override {
    follow(*this, x, 0, order_mid{x, stage1_value(x)}, std::move(done));
  }
  template <class F>
  void later(std::chrono::microseconds d, F f) { run_later(d, std::move(f)); }
};

class stage2_handler : public handler<order_mid, uint64_t> {
public:
  void on_event(order_mid& x, completion<uint64_t> done) override {
    follow(*this, x.in, 1, stage2_value(x), std::move(done));
  }
  template <class F>
  void later(std::chrono::microseconds d, F f) { run_later(d, std::move(f)); }
};

/// Per-account totals that outlive lanes: a lane loads its account's total
/// on activation and flushes it on retirement.
struct ledger_store {
  std::mutex mtx;
  std::map<uint32_t, int64_t> totals;
  std::atomic<int> overlaps{0}; // two lanes of one account alive at once
  std::map<uint32_t, bool> active;
};

/// A stateful stage: the running total of the event's account after it.
class total_handler : public handler<order_mid, int64_t> {
public:
  explicit total_handler(std::shared_ptr<ledger_store> store)
    : store_(std::move(store)) {}

  void on_activate(const key& k) override {
    std::lock_guard<std::mutex> guard{store_->mtx};
    auto id = static_cast<uint32_t>(k.integer());
    if (store_->active[id])
      ++store_->overlaps;
    store_->active[id] = true;
    total_ = store_->totals[id];
  }

  void on_retire(const key& k) override {
    std::lock_guard<std::mutex> guard{store_->mtx};
    auto id = static_cast<uint32_t>(k.integer());
    store_->totals[id] = total_;
    store_->active[id] = false;
  }

  void on_event(order_mid& x, completion<int64_t> done) override {
    total_ += x.in.amount;
    done.ok(total_);
  }

private:
  std::shared_ptr<ledger_store> store_;
  int64_t total_ = 0;
};

} // namespace keylane::test
