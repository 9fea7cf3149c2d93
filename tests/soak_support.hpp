// SPDX-License-Identifier: Apache-2.0
#pragma once

// The soak's payload, handler and output checker: a million events of every
// fate the runtime knows (ok, skip, transient failure, a throw or a dropped
// completion on the first attempt, permanent failure that parks the key),
// completed now, from a lane timer or from a thread of the test's own, and
// checked at the output as they stream by (nothing per event is kept but a
// delivery count), so the soak can run long in little memory.

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <random>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <caf/meta/type_name.hpp>

#include <keylane/handler.hpp>
#include <keylane/runtime.hpp>

namespace keylane::soak {

/// What the handler does with an event.
enum class fate : uint8_t {
  ok,
  skip,
  transient,  // fails its first `fail_first` attempts
  throw_once, // throws on its first attempt
  drop_once,  // drops its completion on its first attempt
  permanent,  // fails for good: parks its key
};

/// The soak's payload; serialisable, so the SQLite park store keeps it.
struct item {
  uint32_t key_id = 0;
  uint32_t producer = 0;
  uint64_t index = 0; // position in its producer's sequence
  uint32_t latency_us = 0;
  uint8_t what = 0;
  uint8_t fail_first = 0;
  uint32_t tries = 0; // attempts the handler saw
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, item& x) {
  return f(caf::meta::type_name("keylane_soak_item"), x.key_id, x.producer,
           x.index, x.latency_us, x.what, x.fail_first, x.tries);
}

inline fate fate_of(const item& x) { return static_cast<fate>(x.what); }

inline uint64_t expected_result(const item& x) {
  return x.index * 31 + x.key_id * 7 + x.producer;
}

/// Attempts an event of this fate takes (when it is not parked).
inline uint32_t want_attempts(const item& x) {
  switch (fate_of(x)) {
    case fate::transient: return x.fail_first + 1u;
    case fate::throw_once:
    case fate::drop_once: return 2;
    default: return 1;
  }
}

/// Runs callbacks after a short delay on one thread of its own, in the
/// order they came (the delays are microseconds; FIFO is close enough).
/// `stop` runs what is left and joins; call it before the runtime stops.
class completer {
public:
  completer() : thread_([this] { loop(); }) {}
  ~completer() { stop(); }

  void later(std::chrono::microseconds delay, std::function<void()> fn) {
    {
      std::lock_guard<std::mutex> guard{mtx_};
      queue_.push_back({clock::now() + delay, std::move(fn)});
    }
    cv_.notify_one();
  }

  void stop() {
    {
      std::lock_guard<std::mutex> guard{mtx_};
      if (done_)
        return;
      done_ = true;
    }
    cv_.notify_one();
    thread_.join();
  }

private:
  using clock = std::chrono::steady_clock;
  struct job {
    clock::time_point due;
    std::function<void()> fn;
  };

  void loop() {
    std::unique_lock<std::mutex> guard{mtx_};
    for (;;) {
      cv_.wait(guard, [this] { return done_ || !queue_.empty(); });
      if (queue_.empty())
        return;
      auto j = std::move(queue_.front());
      queue_.pop_front();
      guard.unlock();
      std::this_thread::sleep_until(j.due);
      j.fn();
      guard.lock();
    }
  }

  std::mutex mtx_;
  std::condition_variable cv_;
  std::deque<job> queue_;
  bool done_ = false;
  std::thread thread_;
};

/// What the handlers saw, shared by all instances of one run.
struct inside {
  inside(size_t keys, size_t producers)
    : busy(keys), last_index(keys * producers), producers(producers) {
    for (auto& x : last_index)
      x = -1;
  }
  std::vector<std::atomic<bool>> busy;
  std::vector<std::atomic<int64_t>> last_index; // per key and producer
  size_t producers;
  std::atomic<uint64_t> overlap{0};
  std::atomic<uint64_t> out_of_order{0};
  std::atomic<uint64_t> attempts{0};
  completer late;
};

/// Acts out the fates, and checks start order and one-at-a-time per key.
class handler : public keylane::handler<item, uint64_t> {
public:
  explicit handler(inside* in) : in_(in) {}

  void on_event(item& x, completion<uint64_t> done) override {
    ++in_->attempts;
    auto attempt = ++x.tries;
    if (in_->busy[x.key_id].exchange(true))
      ++in_->overlap;
    auto& last = in_->last_index[x.key_id * in_->producers + x.producer];
    auto idx = static_cast<int64_t>(x.index);
    if (idx < last.load() || (idx == last.load() && attempt == 1))
      ++in_->out_of_order;
    last = idx;
    step s{x.key_id, act(x, attempt), expected_result(x)};
    if (x.latency_us == 0) {
      finish(s, std::move(done), true);
      return;
    }
    auto shared = std::make_shared<completion<uint64_t>>(std::move(done));
    auto delay = std::chrono::microseconds(x.latency_us);
    if (x.index % 3 == 0)
      in_->late.later(delay, [this, shared, s] {
        finish(s, std::move(*shared), false);
      });
    else
      run_later(delay, [this, shared, s] {
        finish(s, std::move(*shared), true);
      });
  }

private:
  enum class act_kind : uint8_t { ok, skip, fail, fail_for_good, raise, drop };
  struct step {
    uint32_t key_id;
    act_kind what;
    uint64_t result;
  };

  static act_kind act(const item& x, uint32_t attempt) {
    switch (fate_of(x)) {
      case fate::ok: return act_kind::ok;
      case fate::skip: return act_kind::skip;
      case fate::transient:
        return attempt <= x.fail_first ? act_kind::fail : act_kind::ok;
      case fate::throw_once: return attempt == 1 ? act_kind::raise : act_kind::ok;
      case fate::drop_once: return attempt == 1 ? act_kind::drop : act_kind::ok;
      case fate::permanent: return act_kind::fail_for_good;
    }
    return act_kind::fail_for_good;
  }

  // `may_throw` is false on the completer's thread: a throw there is a drop.
  void finish(step s, completion<uint64_t> done, bool may_throw) {
    in_->busy[s.key_id] = false; // before done: the next may start at once
    switch (s.what) {
      case act_kind::ok: done.ok(s.result); break;
      case act_kind::skip: done.skip(); break;
      case act_kind::fail: done.fail("soak: transient"); break;
      case act_kind::fail_for_good: done.fail_permanently("soak: permanent"); break;
      case act_kind::raise:
        if (may_throw)
          throw std::runtime_error("soak: thrown");
        break; // dropped
      case act_kind::drop: break; // `done` goes out of scope unfinished
    }
  }

  inside* in_;
};

/// Builds the workload: `n` events over `keys` keys (key 0 takes a quarter)
/// from `producers`; `permanent_per_million` events on cold keys fail for good.
inline std::vector<std::vector<item>>
make_workload(uint64_t seed, size_t n, size_t keys, size_t producers,
              uint32_t permanent_per_million) {
  std::mt19937_64 rng{seed};
  std::vector<std::vector<item>> out(producers);
  for (auto& v : out)
    v.reserve(n / producers + 16);
  for (size_t i = 0; i < n; ++i) {
    auto prod = static_cast<uint32_t>(rng() % producers);
    item x;
    x.key_id = rng() % 4 == 0 ? 0 : 1 + static_cast<uint32_t>(rng() % (keys - 1));
    x.producer = prod;
    x.index = out[prod].size();
    x.latency_us = rng() % 10 < 3 ? 1 + static_cast<uint32_t>(rng() % 50) : 0;
    auto f = rng() % 1000000;
    fate what = fate::ok;
    if (f < 30000)
      what = fate::skip;
    else if (f < 40000) {
      what = fate::transient;
      x.fail_first = static_cast<uint8_t>(1 + rng() % 2);
    } else if (f < 50000)
      what = fate::throw_once;
    else if (f < 60000)
      what = fate::drop_once;
    else if (f < 60000 + permanent_per_million && x.key_id != 0)
      what = fate::permanent;
    x.what = static_cast<uint8_t>(what);
    out[prod].push_back(x);
  }
  return out;
}

} // namespace keylane::soak
