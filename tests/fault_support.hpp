// SPDX-License-Identifier: Apache-2.0
#pragma once

// Fault injection for the parking tests: a payload that counts its live
// instances and serialises through CAF's inspect (so the SQLite park store
// can keep it), a table of per-event fault plans the test can heal between
// runs, a thread that finishes completions later (late ones for timed-out
// attempts included), and a handler that acts out the plans and journals
// every attempt it sees.

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <caf/meta/type_name.hpp>

#include <keylane/handler.hpp>

namespace keylane::test {

using fault_clock = std::chrono::steady_clock;

/// A test payload that counts live instances (rigtorp's TestType habit), so
/// a leak or a double destruction shows. Only `id`, `key_id` and `producer`
/// are payload; the fault plan lives in the `fault_table`, so healing a
/// fault changes what a replay of the same payload does.
struct item {
  static inline std::atomic<int64_t> live{0};
  static constexpr uint32_t alive_mark = 0xFA017u;

  uint64_t id = 0;
  uint32_t key_id = 0;
  uint32_t producer = 0;
  uint32_t mark = alive_mark;

  item() { ++live; }
  item(uint64_t id, uint32_t key_id, uint32_t producer)
    : id(id), key_id(key_id), producer(producer) {
    ++live;
  }
  item(const item& x) : id(x.id), key_id(x.key_id), producer(x.producer) {
    ++live;
  }
  item(item&& x) noexcept : id(x.id), key_id(x.key_id), producer(x.producer) {
    ++live;
  }
  item& operator=(const item& x) {
    id = x.id;
    key_id = x.key_id;
    producer = x.producer;
    return *this;
  }
  item& operator=(item&& x) noexcept {
    id = x.id;
    key_id = x.key_id;
    producer = x.producer;
    return *this;
  }
  ~item() {
    if (mark != alive_mark)
      std::abort(); // destroyed twice
    mark = 0;
    --live;
  }
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, item& x) {
  return f(caf::meta::type_name("keylane_test_item"), x.id, x.key_id,
           x.producer);
}

/// The result the handler computes for an ok event, checked at the output.
inline uint64_t expected_result(const item& x) {
  return x.id * 7 + x.key_id;
}

/// The value a late completion of a timed-out attempt offers; it must never
/// reach an output.
inline uint64_t stale_result(uint64_t id) {
  return 0xBAD0000000000000ull | id;
}

/// How an event's failing attempts fail.
enum class fail_how : uint8_t {
  /// `done.fail(reason)` inside `on_event`.
  fail,
  /// `done.fail(reason)` later, from the completer thread.
  fail_later,
  /// `on_event` throws.
  raise,
  /// The completion is let go unfinished inside `on_event`.
  drop,
  /// Never finished in time; the completer thread finishes it (ok, with
  /// `stale_result`) once the runtime has visibly given up on the attempt.
  hang_thread,
  /// Never finished in time; a lane timer finishes it (ok, with
  /// `stale_result`) at one and a half times the attempt timeout.
  hang_timer,
};

/// What the handler does with one event, attempt by attempt: `failures`
/// attempts fail the `how` way, the next one ends as `then` says.
struct plan {
  enum class end : uint8_t { ok, skip, permanent };
  uint32_t failures = 0;
  fail_how how = fail_how::fail;
  end then = end::ok;
  /// How a successful or skipped attempt completes: 0 inside `on_event`;
  /// otherwise after this many microseconds, from a lane timer (odd ids)
  /// or from the completer thread (even ids).
  uint32_t latency_us = 0;
  /// Bit k - 1 set: attempt k of this run could not be finished before
  /// the attempt timeout and hung instead (see `fault_table::overtaken`).
  uint32_t overtaken = 0;
  /// The failures such attempts added to `failures` in this run.
  uint32_t overtaken_failures = 0;
};

/// The reason text the handler gives for a failing attempt of `id`.
inline std::string injected_failure(uint64_t id, uint32_t attempt) {
  return "injected failure of " + std::to_string(id) + " at attempt "
         + std::to_string(attempt);
}
inline std::string injected_exception(uint64_t id, uint32_t attempt) {
  return "injected exception of " + std::to_string(id) + " at attempt "
         + std::to_string(attempt);
}
inline std::string injected_permanent(uint64_t id) {
  return "permanent failure of " + std::to_string(id);
}

/// Fault plans and per-run attempt counters of every event of a test, by
/// payload id. Ids are handed out by `add` from a fixed capacity, so the
/// counters never move while handlers run.
class fault_table {
public:
  explicit fault_table(size_t capacity)
    : plans_(capacity), attempts_(capacity), outputs_(capacity) {}

  /// Registers a plan; returns the new payload id.
  uint64_t add(plan p) {
    std::lock_guard<std::mutex> guard{mtx_};
    if (size_ == plans_.size())
      throw std::logic_error("fault_table: capacity exhausted");
    plans_[size_] = p;
    return size_++;
  }

  [[nodiscard]] plan get(uint64_t id) const {
    std::lock_guard<std::mutex> guard{mtx_};
    return plans_.at(id);
  }

  /// Makes `id` succeed at its next attempt, at once.
  void heal(uint64_t id) {
    std::lock_guard<std::mutex> guard{mtx_};
    plans_.at(id) = plan{};
  }

  /// Whether `id`'s plan fails at all.
  [[nodiscard]] bool faulty(uint64_t id) const {
    auto p = get(id);
    return p.failures > 0 || p.then == plan::end::permanent;
  }

  /// Records that `attempt` of `id` could not be finished before the
  /// attempt timeout (the machine held back the thread finishing it): the
  /// runtime times it out, so its plan now says so. `failing`: the attempt
  /// was planned to fail anyway, only its way changes.
  void overtaken(uint64_t id, uint32_t attempt, bool failing) {
    std::lock_guard<std::mutex> guard{mtx_};
    auto& p = plans_.at(id);
    if (!failing) {
      ++p.failures;
      ++p.overtaken_failures;
    }
    if (attempt >= 1 && attempt <= 32)
      p.overtaken |= 1u << (attempt - 1);
    ++overtaken_;
  }

  /// Attempts `overtaken` so far.
  [[nodiscard]] uint64_t overtaken_count() const {
    std::lock_guard<std::mutex> guard{mtx_};
    return overtaken_;
  }

  /// Starts a new run of `id` (before it is replayed): attempts count
  /// from 1 again, and the plan is as it was before the machine
  /// overtook any of its attempts.
  void rearm(uint64_t id) {
    {
      std::lock_guard<std::mutex> guard{mtx_};
      auto& p = plans_.at(id);
      p.failures -= p.overtaken_failures;
      p.overtaken_failures = 0;
      p.overtaken = 0;
    }
    attempts_.at(id) = 0;
  }

  /// Counts an attempt of `id`; returns its number within the run.
  uint32_t begin_attempt(uint64_t id) { return ++attempts_.at(id); }

  /// Attempts of `id` in its current run.
  [[nodiscard]] uint32_t attempts(uint64_t id) const {
    return attempts_.at(id).load();
  }

  /// Counts an output of `id` (called by the test's output side).
  void note_output(uint64_t id) { ++outputs_.at(id); }

  [[nodiscard]] uint32_t outputs(uint64_t id) const {
    return outputs_.at(id).load();
  }

  [[nodiscard]] size_t size() const {
    std::lock_guard<std::mutex> guard{mtx_};
    return size_;
  }

private:
  mutable std::mutex mtx_;
  std::vector<plan> plans_;
  size_t size_ = 0;
  uint64_t overtaken_ = 0;
  std::vector<std::atomic<uint32_t>> attempts_;
  std::vector<std::atomic<uint32_t>> outputs_;
};

/// One handler attempt as the handler saw it.
struct attempt_record {
  uint64_t id = 0;
  uint32_t attempt = 0;
  fault_clock::time_point start;
  /// When the attempt failed, at the latest from the runtime's point of
  /// view (for a hang: the attempt's deadline as the runtime gave it, the
  /// earliest it may give up); unset for attempts that did not fail.
  fault_clock::time_point failed_at;
  bool failed = false;
  /// It hung because the machine held back its completion (see
  /// `fault_table::overtaken`).
  bool overtaken = false;
};

/// Every attempt per key, in start order, and overlap detection: the next
/// attempt of a key must not start before the previous one finished, or
/// timed out.
class journal {
public:
  explicit journal(size_t keys) : by_key_(keys), busy_(keys, idle) {}

  /// Records the start of an attempt; returns its index for `failed`.
  size_t begin(uint32_t key_id, uint64_t id, uint32_t attempt,
               fault_clock::time_point now) {
    std::lock_guard<std::mutex> guard{mtx_};
    auto& v = by_key_.at(key_id);
    v.push_back(attempt_record{id, attempt, now, {}, false, false});
    auto index = v.size() - 1;
    if (busy_.at(key_id) != idle)
      overlapping_.push_back(overlap{key_id, busy_[key_id], index});
    busy_[key_id] = index;
    return index;
  }

  /// Attempt `index` is over as far as the handler is concerned (called
  /// right before it finishes the completion, or when it lets a hang go).
  void end(uint32_t key_id, size_t index) {
    std::lock_guard<std::mutex> guard{mtx_};
    if (busy_.at(key_id) == index)
      busy_[key_id] = idle;
  }

  /// Attempt `index` hung because its completion was held back.
  void overtaken(uint32_t key_id, size_t index) {
    std::lock_guard<std::mutex> guard{mtx_};
    by_key_.at(key_id).at(index).overtaken = true;
  }

  /// Attempts that started while the key's previous one still ran. The
  /// one exception: an overtaken attempt (its completion held back past
  /// the timeout) may be followed once its deadline has passed.
  [[nodiscard]] size_t overlaps() const {
    std::lock_guard<std::mutex> guard{mtx_};
    size_t n = 0;
    for (auto& o : overlapping_) {
      auto& prev = by_key_.at(o.key_id).at(o.prev);
      auto& next = by_key_.at(o.key_id).at(o.next);
      if (!(prev.overtaken && next.start >= prev.failed_at))
        ++n;
    }
    return n;
  }

  void failed(uint32_t key_id, size_t index, fault_clock::time_point at) {
    std::lock_guard<std::mutex> guard{mtx_};
    auto& r = by_key_.at(key_id).at(index);
    r.failed = true;
    r.failed_at = at;
  }

  /// The attempts of `key_id` so far.
  [[nodiscard]] std::vector<attempt_record> of(uint32_t key_id) const {
    std::lock_guard<std::mutex> guard{mtx_};
    return by_key_.at(key_id);
  }

  /// Forgets the records (between runs, after they were checked, while no
  /// handler runs).
  void clear() {
    std::lock_guard<std::mutex> guard{mtx_};
    overlapping_.clear();
    for (auto& v : by_key_)
      v.clear();
    std::fill(busy_.begin(), busy_.end(), idle);
  }

  [[nodiscard]] size_t keys() const noexcept { return by_key_.size(); }

private:
  static constexpr size_t idle = static_cast<size_t>(-1);
  struct overlap {
    uint32_t key_id;
    size_t prev;
    size_t next;
  };
  mutable std::mutex mtx_;
  std::vector<std::vector<attempt_record>> by_key_;
  // Per key: the index of the attempt running now, or `idle`.
  std::vector<size_t> busy_;
  std::vector<overlap> overlapping_;
};

/// A thread that runs functions later: at a deadline, or once a condition
/// holds (re-checked on `poke` and every few milliseconds). Completions
/// finished here are finished "from another thread".
class completer {
public:
  completer() : thread_([this] { loop(); }) {}
  ~completer() { shutdown(); }
  completer(const completer&) = delete;
  completer& operator=(const completer&) = delete;

  void after(std::chrono::microseconds delay, std::function<void()> fn) {
    {
      std::lock_guard<std::mutex> guard{mtx_};
      timed_.push_back(timed{fault_clock::now() + delay, std::move(fn)});
    }
    cv_.notify_one();
  }

  void when(std::function<bool()> ready, std::function<void()> fn) {
    {
      std::lock_guard<std::mutex> guard{mtx_};
      waiting_.push_back(waiter{std::move(ready), std::move(fn)});
    }
    cv_.notify_one();
  }

  /// Something changed: re-check the conditions.
  void poke() {
    {
      std::lock_guard<std::mutex> guard{mtx_};
      poked_ = true;
    }
    cv_.notify_one();
  }

  /// Stops the thread and drops what never ran (a dropped completion just
  /// fails its event, or is ignored if it is stale). Call it while the
  /// runtime's actor system still exists.
  void shutdown() {
    {
      std::lock_guard<std::mutex> guard{mtx_};
      if (stop_)
        return;
      stop_ = true;
    }
    cv_.notify_one();
    thread_.join();
    std::vector<timed> t;
    std::vector<waiter> w;
    {
      std::lock_guard<std::mutex> guard{mtx_};
      t.swap(timed_);
      w.swap(waiting_);
    }
  }

private:
  struct timed {
    fault_clock::time_point at;
    std::function<void()> fn;
  };
  struct waiter {
    std::function<bool()> ready;
    std::function<void()> fn;
  };

  void loop() {
    std::unique_lock<std::mutex> guard{mtx_};
    while (!stop_) {
      std::vector<std::function<void()>> due;
      auto now = fault_clock::now();
      auto next = now + std::chrono::milliseconds(5);
      for (size_t i = 0; i < timed_.size();) {
        if (timed_[i].at <= now) {
          due.push_back(std::move(timed_[i].fn));
          timed_[i] = std::move(timed_.back());
          timed_.pop_back();
        } else {
          next = std::min(next, timed_[i].at);
          ++i;
        }
      }
      for (size_t i = 0; i < waiting_.size();) {
        if (waiting_[i].ready()) {
          due.push_back(std::move(waiting_[i].fn));
          waiting_[i] = std::move(waiting_.back());
          waiting_.pop_back();
        } else {
          ++i;
        }
      }
      if (!due.empty()) {
        guard.unlock();
        for (auto& fn : due)
          fn();
        due.clear();
        guard.lock();
        continue;
      }
      poked_ = false;
      cv_.wait_until(guard, next, [this] { return stop_ || poked_; });
    }
  }

  std::mutex mtx_;
  std::condition_variable cv_;
  std::vector<timed> timed_;
  std::vector<waiter> waiting_;
  bool poked_ = false;
  bool stop_ = false;
  std::thread thread_;
};

/// Acts out the plan of each event and journals every attempt.
class fault_handler : public handler<item, uint64_t> {
public:
  fault_handler(fault_table* table, journal* jr, completer* later,
                size_t attempt_timeout_ms)
    : table_(table), jr_(jr), later_(later),
      timeout_(std::chrono::milliseconds(attempt_timeout_ms)) {}

  void on_event(item& x, completion<uint64_t> done) override {
    auto now = fault_clock::now();
    // The runtime's own: it started the attempt a little before `now`, and
    // a machine that stalls this thread makes that "little" milliseconds.
    auto deadline = done.deadline().value_or(now + timeout_);
    auto attempt = table_->begin_attempt(x.id);
    auto p = table_->get(x.id);
    auto index = jr_->begin(x.key_id, x.id, attempt, now);
    later_->poke(); // a hang_thread waiter may be waiting for this attempt
    if (attempt <= p.failures) {
      fail(x, attempt, index, p.how, deadline, std::move(done));
      return;
    }
    switch (p.then) {
      case plan::end::permanent:
        jr_->failed(x.key_id, index, fault_clock::now());
        jr_->end(x.key_id, index);
        done.fail_permanently(injected_permanent(x.id));
        return;
      case plan::end::skip:
      case plan::end::ok:
        break;
    }
    auto key_id = x.key_id;
    auto skip = p.then == plan::end::skip;
    auto result = expected_result(x);
    if (p.latency_us == 0) {
      jr_->end(key_id, index);
      if (skip)
        done.skip();
      else
        done.ok(result);
      return;
    }
    auto shared = std::make_shared<completion<uint64_t>>(std::move(done));
    auto finish = [ctx = context(x, attempt, index, deadline), skip, result,
                   shared] {
      if (ctx.late()) {
        ctx.hang(shared, false);
        return;
      }
      ctx.jr->end(ctx.key_id, ctx.index);
      if (skip)
        shared->skip();
      else
        shared->ok(result);
    };
    auto delay = std::chrono::microseconds(p.latency_us);
    if (x.id % 2 == 1)
      run_later(delay, finish);
    else
      later_->after(delay, finish);
  }

private:
  void fail(const item& x, uint32_t attempt, size_t index, fail_how how,
            fault_clock::time_point deadline, completion<uint64_t> done) {
    auto key_id = x.key_id;
    auto id = x.id;
    switch (how) {
      case fail_how::fail:
        jr_->failed(key_id, index, fault_clock::now());
        jr_->end(key_id, index);
        done.fail(injected_failure(id, attempt));
        return;
      case fail_how::fail_later: {
        auto shared = std::make_shared<completion<uint64_t>>(std::move(done));
        later_->after(std::chrono::microseconds(200 + id % 300),
                      [ctx = context(x, attempt, index, deadline), shared] {
                        if (ctx.late()) {
                          ctx.hang(shared, true);
                          return;
                        }
                        ctx.jr->failed(ctx.key_id, ctx.index,
                                       fault_clock::now());
                        ctx.jr->end(ctx.key_id, ctx.index);
                        shared->fail(injected_failure(ctx.id, ctx.attempt));
                      });
        return;
      }
      case fail_how::raise:
        jr_->failed(key_id, index, fault_clock::now());
        jr_->end(key_id, index);
        throw std::runtime_error(injected_exception(id, attempt));
      case fail_how::drop:
        jr_->failed(key_id, index, fault_clock::now());
        jr_->end(key_id, index);
        return; // `done` goes out of scope unfinished
      case fail_how::hang_thread:
        context(x, attempt, index, deadline)
          .hang(std::make_shared<completion<uint64_t>>(std::move(done)));
        return;
      case fail_how::hang_timer: {
        jr_->failed(key_id, index, deadline);
        jr_->end(key_id, index);
        auto shared = std::make_shared<completion<uint64_t>>(std::move(done));
        run_later(timeout_ + timeout_ / 2,
                  [id, shared] { shared->ok(stale_result(id)); });
        return;
      }
    }
  }

  // What finishing an attempt later needs; copied into the callbacks,
  // which may outlive the handler.
  struct attempt_context {
    fault_table* table;
    journal* jr;
    completer* later;
    std::chrono::milliseconds timeout;
    uint32_t key_id;
    uint64_t id;
    uint32_t attempt;
    size_t index;
    fault_clock::time_point deadline;

    // A machine that stalls the finishing thread can hold a completion
    // back until the attempt timeout, or nearly: the runtime then times the
    // attempt out, or races to. Whether the completion or the timeout
    // wins would then be luck, so such an attempt is not finished at all:
    // it hangs, and its plan says so (`fault_table::overtaken`).
    [[nodiscard]] bool late() const {
      if (timeout.count() == 0)
        return false;
      auto margin = std::min<std::chrono::milliseconds>(timeout / 10,
                                                        std::chrono::milliseconds(10));
      return fault_clock::now() >= deadline - margin;
    }

    void hang(std::shared_ptr<completion<uint64_t>> done,
              std::optional<bool> overtaken_failing = std::nullopt) const {
      if (overtaken_failing) {
        table->overtaken(id, attempt, *overtaken_failing);
        jr->overtaken(key_id, index);
      }
      // The runtime may give up no earlier than the timeout.
      jr->failed(key_id, index, deadline);
      jr->end(key_id, index);
      auto seen = table->outputs(id);
      // Finish it once the runtime has visibly moved on: the event's next
      // attempt started, or the event came out.
      later->when(
        [t = table, i = id, a = attempt, seen] {
          return t->attempts(i) > a || t->outputs(i) > seen;
        },
        [i = id, done] { done->ok(stale_result(i)); });
    }
  };

  [[nodiscard]] attempt_context context(const item& x, uint32_t attempt,
                                        size_t index,
                                        fault_clock::time_point deadline) const {
    return attempt_context{table_, jr_,     later_,  timeout_, x.key_id,
                           x.id,   attempt, index,   deadline};
  }

  fault_table* table_;
  journal* jr_;
  completer* later_;
  std::chrono::milliseconds timeout_;
};

/// How often each kind of fault is drawn, in percent of events.
struct fault_mix {
  int skip = 8;
  /// Transient failures that heal within the attempts allowed.
  int transient = 14;
  /// Transient failures that outlast every attempt (then parked).
  int exhausting = 3;
  /// A permanent failure (sometimes after a transient one).
  int permanent = 2;
  /// Of the successful completions, how many are asynchronous.
  int async = 40;
  /// Whether hangs (attempt timeouts with late completions) are drawn;
  /// needs `attempt_timeout_ms > 0`.
  bool hangs = true;
  /// Of the failing events, how many fail by hanging (when `hangs`).
  int hang_share = 10;
};

/// Draws one plan.
template <class Rng>
plan random_plan(Rng& rng, const fault_mix& mix, uint32_t max_attempts) {
  std::uniform_int_distribution<int> pct(0, 99);
  auto draw_how = [&] {
    auto h = pct(rng);
    if (mix.hangs && h < mix.hang_share)
      return h % 2 == 0 ? fail_how::hang_thread : fail_how::hang_timer;
    switch (h % 4) {
      case 0: return fail_how::fail;
      case 1: return fail_how::fail_later;
      case 2: return fail_how::raise;
      default: return fail_how::drop;
    }
  };
  plan p;
  if (pct(rng) < mix.async)
    p.latency_us = 1 + static_cast<uint32_t>(rng() % 800);
  auto f = pct(rng);
  if (f < mix.skip) {
    p.then = plan::end::skip;
  } else if ((f -= mix.skip) < mix.transient) {
    p.failures = max_attempts <= 1
                   ? 0
                   : 1 + static_cast<uint32_t>(rng() % (max_attempts - 1));
    p.how = draw_how();
    // Now and then a transient failure ends in a skip.
    if (pct(rng) < 15)
      p.then = plan::end::skip;
  } else if ((f -= mix.transient) < mix.exhausting) {
    p.failures = max_attempts + static_cast<uint32_t>(rng() % 2);
    p.how = draw_how();
  } else if ((f -= mix.exhausting) < mix.permanent) {
    p.then = plan::end::permanent;
    p.failures = max_attempts > 1 && pct(rng) < 30 ? 1 : 0;
    p.how = draw_how();
  }
  return p;
}

/// The seed for this run: $KEYLANE_SEED if set, random otherwise.
inline uint64_t fault_seed() {
  if (auto* s = std::getenv("KEYLANE_SEED"))
    return std::strtoull(s, nullptr, 10);
  return std::random_device{}();
}

} // namespace keylane::test
