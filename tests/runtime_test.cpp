// SPDX-License-Identifier: Apache-2.0
// Functional tests of keylane::runtime: round trips, admission, handler
// outcomes, asynchronous completion, lane hooks, configuration, shutdown.
#include "runtime_support.hpp"

#include <algorithm>
#include <cstddef>
#include <type_traits>
#include <utility>

using namespace runtime_support;

namespace {
template <class Rt>
using event_ptr = std::unique_ptr<typename Rt::event_type>;

// Compile checks: `submit(nullptr, ...)` does not compile (a null pointer
// is no key), as `submit(true, ...)` does not; `submit(7, ...)` does.
template <class Rt, class Key, class = void>
struct submits : std::false_type {};
template <class Rt, class Key>
struct submits<Rt, Key,
               std::void_t<decltype(std::declval<Rt&>().submit(
                 std::declval<Key>(), std::declval<int>()))>>
  : std::true_type {};
static_assert(submits<int_rt, int>::value, "an int id is a key");
static_assert(submits<int_rt, const char*>::value, "a string is a key");
static_assert(!submits<int_rt, bool>::value, "a bool is no key");
static_assert(!submits<int_rt, std::nullptr_t>::value, "nullptr is no key");

} // namespace

TEST_CASE("pulled events come back ok with the handler's result in seq order",
          "[runtime][pull][order]") {
  auto rt = start<int_rt>(two_threads(), scripted_registry());
  for (int i = 0; i < 100; ++i) {
    auto r = rt->submit(kl::key{i % 7}, i);
    REQUIRE(r.ok());
    CHECK(r.seq() == uint64_t(i));
  }
  event_ptr<int_rt> ev;
  for (int i = 0; i < 100; ++i) {
    REQUIRE(rt->pull(ev, 10s));
    CHECK(ev->seq == uint64_t(i));
    CHECK(ev->key() == kl::key{i % 7});
    CHECK(ev->payload == i);
    REQUIRE(ev->status == kl::outcome::ok);
    CHECK(ev->result == i * 10);
    CHECK(ev->error.empty());
  }
  CHECK_FALSE(rt->try_pull(ev));
}

TEST_CASE("with sink.output_thread = consumer the output callback sees every "
          "event once, all on one thread",
          "[runtime][callback]") {
  std::mutex mtx;
  std::vector<uint64_t> seqs;
  std::set<std::thread::id> threads;
  auto cfg = two_threads();
  cfg.output_thread = kl::output_thread::consumer;
  auto rt = start<int_rt>(cfg, scripted_registry(),
                          [&](int_rt::event_type& e) {
                            std::lock_guard<std::mutex> guard{mtx};
                            CHECK(e.status == kl::outcome::ok);
                            seqs.push_back(e.seq);
                            threads.insert(std::this_thread::get_id());
                          });
  for (int i = 0; i < 500; ++i)
    REQUIRE(rt->submit(kl::key{i % 13}, i));
  REQUIRE(rt->drain(10s));
  event_ptr<int_rt> ev;
  CHECK_FALSE(rt->pull(ev, 1ms)); // outputs go to the callback only
  std::lock_guard<std::mutex> guard{mtx};
  REQUIRE(seqs.size() == 500);
  for (size_t i = 0; i < seqs.size(); ++i)
    CHECK(seqs[i] == i); // global order: each once, in order
  CHECK(threads.size() == 1);
  CHECK(threads.count(std::this_thread::get_id()) == 0);
}

TEST_CASE("with sink.output_thread = sink the callback runs on the workers, "
          "in order, and no consumer thread is started",
          "[runtime][callback]") {
  for (auto where : {kl::output_thread::consumer, kl::output_thread::sink}) {
    CAPTURE(kl::to_string(where));
    std::mutex mtx;
    std::vector<uint64_t> seqs;
    std::set<std::thread::id> handler_threads, output_threads;
    auto cfg = two_threads();
    cfg.threads = 1; // one worker: the handler's thread is the sink's
    cfg.output_thread = where;
    auto rt = start<int_rt>(
      cfg,
      from_fn<int, int>([&](auto&, int& v, kl::completion<int> done) {
        {
          std::lock_guard<std::mutex> guard{mtx};
          handler_threads.insert(std::this_thread::get_id());
        }
        done.ok(v);
      }),
      [&](int_rt::event_type& e) {
        std::lock_guard<std::mutex> guard{mtx};
        seqs.push_back(e.seq);
        output_threads.insert(std::this_thread::get_id());
      });
    for (int i = 0; i < 300; ++i)
      REQUIRE(rt->submit(kl::key{i % 11}, i));
    REQUIRE(rt->drain(10s));
    std::lock_guard<std::mutex> guard{mtx};
    REQUIRE(seqs.size() == 300);
    for (size_t i = 0; i < seqs.size(); ++i)
      CHECK(seqs[i] == i);
    REQUIRE(handler_threads.size() == 1);
    REQUIRE(output_threads.size() == 1);
    if (where == kl::output_thread::sink)
      CHECK(*output_threads.begin() == *handler_threads.begin());
    else
      CHECK(*output_threads.begin() != *handler_threads.begin());
  }
}

TEST_CASE("with sink.output_thread = auto the worker runs the callback while "
          "the consumer sleeps and hands a slow callback's backlog to it",
          "[runtime][callback]") {
  for (auto order : {kl::order_mode::global, kl::order_mode::per_key,
                     kl::order_mode::none}) {
    CAPTURE(kl::to_string(order));
    std::mutex mtx;
    std::vector<std::pair<int, int>> outputs; // key, value, as delivered
    std::vector<std::thread::id> output_threads;
    std::thread::id worker;
    std::atomic<bool> slow{false};
    auto cfg = two_threads();
    cfg.threads = 1; // one worker: the handler's thread is the sink's
    cfg.order = order;
    cfg.output_thread = kl::output_thread::automatic;
    auto rt = start<int_rt>(
      cfg,
      from_fn<int, int>([&](auto&, int& v, kl::completion<int> done) {
        {
          std::lock_guard<std::mutex> guard{mtx};
          worker = std::this_thread::get_id();
        }
        done.ok(v);
      }),
      [&](int_rt::event_type& e) {
        if (slow)
          std::this_thread::sleep_for(1ms);
        std::lock_guard<std::mutex> guard{mtx};
        outputs.emplace_back(*e.result < 100 ? 1 : 2 + *e.result % 2,
                             *e.result);
        output_threads.push_back(std::this_thread::get_id());
      });
    // Light load: each event finds the consumer asleep.
    for (int i = 0; i < 10; ++i) {
      std::this_thread::sleep_for(20ms);
      REQUIRE(rt->submit(kl::key{1}, i));
      REQUIRE(rt->drain(10s));
    }
    {
      std::lock_guard<std::mutex> guard{mtx};
      auto on_worker = std::count(output_threads.begin(),
                                  output_threads.end(), worker);
      CHECK(on_worker == 10);
      output_threads.clear();
    }
    // A slow callback and a burst: the worker runs at most about one call
    // per batch it emits, the consumer thread the rest.
    slow = true;
    for (int i = 0; i < 60; ++i)
      REQUIRE(rt->submit(kl::key{2 + i % 2}, 100 + i));
    REQUIRE(rt->drain(30s));
    std::lock_guard<std::mutex> guard{mtx};
    REQUIRE(outputs.size() == 70);
    auto on_worker = std::count(output_threads.begin(), output_threads.end(),
                                worker);
    CHECK(on_worker >= 1); // the burst's first call found the consumer asleep
    CHECK(on_worker < 30);
    // Each key's values in submission order (and all of them in global).
    std::map<int, int> last;
    for (size_t i = 10; i < outputs.size(); ++i) {
      auto [k, v] = outputs[i];
      if (last.count(k))
        CHECK(v > last[k]);
      last[k] = v;
      if (order == kl::order_mode::global && i > 10)
        CHECK(v == outputs[i - 1].second + 1);
    }
  }
}

TEST_CASE("stats count accepted, delivered and each outcome the handler chose",
          "[runtime][stats]") {
  std::atomic<int> seen{0};
  auto rt = start<int_rt>(two_threads(), scripted_registry(),
                          [&](int_rt::event_type&) { ++seen; });
  std::vector<int> script{1, skips, 2, throws, 3, 4, skips, fails, 5,
                          6, throws, 7, 8, skips, 9, 10};
  for (size_t i = 0; i < script.size(); ++i)
    REQUIRE(rt->submit(kl::key{int(i % 4)}, script[i]));
  REQUIRE(rt->drain(10s));
  // The outcome counters may trail delivery (see the next test); wait for
  // them to add up, then check how they split.
  CHECK(eventually([&] {
    auto s = rt->stats();
    return s.ok + s.skipped + s.failed == 16 && s.sink_buffered == 0;
  }));
  auto s = rt->stats();
  CHECK(seen == 16);
  CHECK(s.accepted == 16);
  CHECK(s.delivered == 16);
  CHECK(s.ok == 10);
  CHECK(s.skipped == 3);
  CHECK(s.failed == 3);
  CHECK(s.rejected == 0);
  CHECK(s.sink_buffered == 0);
  CHECK(s.waiting_keys == 0);
  CHECK(s.lanes_spawned >= 4);
  CHECK(s.peak_active_lanes <= 4);
}

// A pulled event was counted by the sink, and its lane by the supervisor,
// before the event was emitted: a snapshot taken after the pull includes
// both.
TEST_CASE("stats taken right after a pull already count the event and its lane",
          "[runtime][stats]") {
  auto rt = start<int_rt>(two_threads(), scripted_registry());
  event_ptr<int_rt> ev;
  int stale_ok = 0, stale_lanes = 0;
  for (int i = 0; i < 1000; ++i) {
    REQUIRE(rt->submit(kl::key{i}, i)); // a fresh key: a new lane
    REQUIRE(rt->pull(ev, 10s));
    auto s = rt->stats();
    REQUIRE(s.delivered == uint64_t(i + 1));
    stale_ok += s.ok != s.delivered ? 1 : 0;
    stale_lanes += s.lanes_spawned < uint64_t(i + 1) ? 1 : 0;
  }
  CHECK(stale_ok == 0);
  CHECK(stale_lanes == 0);
}

namespace {

enum class via { timer, thread, actor };

// Runs posted jobs in order on its own thread: the "other thread" that
// finishes completions. Finishes what is queued before it joins.
struct worker {
  std::mutex mtx;
  std::condition_variable cv;
  std::deque<std::function<void()>> jobs;
  bool done = false;
  std::thread thread{[this] { run(); }};
  void post(std::function<void()> f) {
    { std::lock_guard<std::mutex> guard{mtx}; jobs.push_back(std::move(f)); }
    cv.notify_one();
  }
  void run() {
    std::unique_lock<std::mutex> guard{mtx};
    for (;;) {
      cv.wait(guard, [&] { return done || !jobs.empty(); });
      if (jobs.empty())
        return;
      auto f = std::move(jobs.front());
      jobs.pop_front();
      guard.unlock();
      f();
      guard.lock();
    }
  }
  ~worker() {
    { std::lock_guard<std::mutex> guard{mtx}; done = true; }
    cv.notify_one();
    thread.join();
  }
};

struct async_ctx {
  via mode;
  std::unique_ptr<worker> other;
  caf::actor service;
  // Per key: is an event between start and completion; what ran, in order.
  std::mutex mtx;
  std::map<std::string, bool> busy;
  std::map<std::string, std::vector<int>> seen;
  int overlaps = 0;
  void enter(const kl::key& k, int v) {
    std::lock_guard<std::mutex> guard{mtx};
    auto& b = busy[k.to_string()];
    overlaps += b ? 1 : 0;
    b = true;
    seen[k.to_string()].push_back(v);
  }
  void leave(const kl::key& k) {
    std::lock_guard<std::mutex> guard{mtx};
    busy[k.to_string()] = false;
  }
};

// The user actor the handlers ask (a class: CAF's function-based actors
// trip UBSan inside CAF with no arguments).
struct doubler : caf::event_based_actor {
  using caf::event_based_actor::event_based_actor;
  caf::behavior make_behavior() override {
    return {[](int x) { return x * 2; }};
  }
};

kl::handler_factory async_handler(std::shared_ptr<async_ctx> c) {
  return from_fn<int, int>([c](auto& h, int& v,
                               kl::completion<int> done) {
    c->enter(h.current_key(), v);
    auto d = std::make_shared<kl::completion<int>>(std::move(done));
    // Marks the key idle, then completes: the next event may start now.
    auto finish = [c, k = h.current_key(), d](int r) {
      c->leave(k);
      d->ok(r);
    };
    switch (c->mode) {
      case via::timer:
        h.run_later(std::chrono::microseconds(100 * (v % 3)),
                    [finish, v] { finish(v * 2); });
        break;
      case via::thread:
        c->other->post([finish, v] { finish(v * 2); });
        break;
      case via::actor:
        h.self()->request(c->service, 10s, v).then(
          [finish](int r) { finish(r); },
          [c, k = h.current_key(), d](caf::error& err) {
            c->leave(k);
            d->fail(caf::to_string(err));
          });
        break;
    }
  });
}

void run_async(via mode) {
  auto c = std::make_shared<async_ctx>();
  c->mode = mode;
  if (mode == via::thread)
    c->other = std::make_unique<worker>();
  auto rt = start<int_rt>(two_threads(), async_handler(c));
  if (mode == via::actor)
    c->service = rt->system().spawn<doubler>();
  at_exit cleanup{[&] {
    if (c->service)
      caf::anon_send_exit(c->service, caf::exit_reason::user_shutdown);
    rt->stop();
    c->other.reset();
    c->service = nullptr;
  }};
  constexpr int keys = 6, per_key = 30;
  for (int i = 0; i < per_key; ++i)
    for (int k = 0; k < keys; ++k)
      REQUIRE(rt->submit(kl::key{k}, i * keys + k));
  event_ptr<int_rt> ev;
  for (int n = 0; n < keys * per_key; ++n) {
    REQUIRE(rt->pull(ev, 10s));
    CHECK(ev->seq == uint64_t(n));
    INFO(ev->error);
    REQUIRE(ev->status == kl::outcome::ok);
    CHECK(ev->result == ev->payload * 2);
  }
  std::lock_guard<std::mutex> guard{c->mtx};
  CHECK(c->overlaps == 0); // no event started before its predecessor ended
  for (int k = 0; k < keys; ++k) {
    std::vector<int> expected;
    for (int i = 0; i < per_key; ++i)
      expected.push_back(i * keys + k);
    CHECK(c->seen[std::to_string(k)] == expected);
  }
}

} // namespace

TEST_CASE("a completion finished by a run_later timer holds back the key's next event",
          "[runtime][async][timer]") {
  run_async(via::timer);
}

TEST_CASE("a completion finished on another thread holds back the key's next event",
          "[runtime][async][thread]") {
  run_async(via::thread);
}

TEST_CASE("a completion finished in a response from a user actor holds back the key's next event",
          "[runtime][async][actor]") {
  run_async(via::actor);
}

TEST_CASE("copies of a shared completion finish their event once: the "
          "first call through any copy wins",
          "[runtime][async][completion]") {
  auto doubled = [](auto& h, int& v, kl::completion<int> done) {
    auto first = std::move(done).share();
    auto second = first; // as CAF copies a request's two handlers
    CHECK(second.pending());
    h.run_later(std::chrono::microseconds(50 * (v % 3)),
                [first, second, v] {
                  (v % 2 ? second : first).ok(v * 2);
                  CHECK_FALSE(first.pending());
                  first.fail("ignored: already finished");
                  second.ok(-1);
                });
  };
  auto rt = start<int_rt>(two_threads(), from_fn<int, int>(doubled));
  for (int i = 0; i < 60; ++i)
    REQUIRE(rt->submit(kl::key{i % 4}, i));
  event_ptr<int_rt> ev;
  for (int i = 0; i < 60; ++i) {
    REQUIRE(rt->pull(ev, 10s));
    REQUIRE(ev->status == kl::outcome::ok);
    CHECK(ev->result == ev->payload * 2);
  }
  CHECK_FALSE(rt->try_pull(ev));
  CHECK(rt->stats().failed == 0);
}

namespace {

struct sum_store {
  std::mutex mtx;
  std::map<std::string, long> sums;
  int activations = 0;
  int retirements = 0;
};

// Keeps a running sum per key; loads it on activate, persists on retire.
struct running_sum : kl::handler<int, long> {
  explicit running_sum(std::shared_ptr<sum_store> s) : store(std::move(s)) {}
  void on_activate(const kl::key& k) override {
    std::lock_guard<std::mutex> guard{store->mtx};
    sum = store->sums[k.to_string()];
    ++store->activations;
  }
  void on_event(int& v, kl::completion<long> done) override {
    sum += v;
    done.ok(sum);
  }
  void on_retire(const kl::key& k) override {
    std::lock_guard<std::mutex> guard{store->mtx};
    store->sums[k.to_string()] = sum;
    ++store->retirements;
  }
  std::shared_ptr<sum_store> store;
  long sum = 0;
};

} // namespace

TEST_CASE("on_activate loads and on_retire flushes per-key state across lane lifetimes",
          "[runtime][hooks]") {
  using sum_rt = kl::runtime<int, long>;
  auto store = std::make_shared<sum_store>();
  auto rt = start<sum_rt>(two_threads(),
                          kl::handler_factory{[store](const kl::handler_params&) {
                            return std::make_unique<running_sum>(store);
                          }});
  const std::vector<std::string> keys{"a", "b", "c", "d", "e"};
  // Each key gets 1, 2, ..., so its running sum after v is v (v + 1) / 2.
  auto round = [&](int from, int to) {
    for (int v = from; v <= to; ++v)
      for (auto& k : keys)
        REQUIRE(rt->submit(k, v));
    event_ptr<sum_rt> ev;
    for (size_t n = 0; n < (to - from + 1) * keys.size(); ++n) {
      REQUIRE(rt->pull(ev, 10s));
      CHECK(ev->result == long(ev->payload) * (ev->payload + 1) / 2);
    }
    // Every lane that ran an event was activated; wait until each retired.
    REQUIRE(eventually([&] {
      std::lock_guard<std::mutex> guard{store->mtx};
      return store->activations == store->retirements;
    }));
    std::lock_guard<std::mutex> guard{store->mtx};
    for (auto& k : keys)
      CHECK(store->sums[k] == long(to) * (to + 1) / 2);
    CHECK(eventually([&] {
      auto s = rt->stats();
      return s.active_lanes == 0 && s.lanes_retired == s.lanes_spawned
             && s.lanes_spawned == uint64_t(store->activations);
    }));
  };
  round(1, 20);
  CHECK(rt->stats().lanes_retired >= keys.size());
  round(21, 40); // new lanes must load the sums the old ones flushed
  CHECK(rt->stats().lanes_retired >= 2 * keys.size());
}

TEST_CASE("a key's events run in submission order when sequential submits come from different threads",
          "[runtime][order]") {
  // The first lane's handler is slow to build, so the supervisor is busy
  // while both events of "k" wait in ingress.
  std::mutex mtx;
  std::condition_variable cv;
  int built = 0;
  bool go = false;
  std::mutex seen_mtx;
  std::vector<int> seen;
  auto inner = from_fn<int, int>([&](auto& h, int& v, kl::completion<int> done) {
    if (h.current_key() == kl::key{"k"}) {
      std::lock_guard<std::mutex> guard{seen_mtx};
      seen.push_back(v);
    }
    done.ok(v);
  });
  auto test_thread = std::this_thread::get_id();
  kl::handler_factory make = [&](const kl::handler_params& p) {
    std::unique_lock<std::mutex> guard{mtx};
    // `start` may build a probe on this thread; block the first lane's.
    if (std::this_thread::get_id() != test_thread && ++built == 1) {
      cv.notify_all();
      cv.wait_for(guard, 10s, [&] { return go; });
    }
    return inner(p);
  };
  auto rt = start<int_rt>(two_threads(), make);
  REQUIRE(rt->submit("warm", 0));
  {
    std::unique_lock<std::mutex> guard{mtx};
    REQUIRE(cv.wait_for(guard, 10s, [&] { return built >= 1; }));
  }
  auto first = rt->submit("k", 1); // returns before the next submit starts
  kl::submit_result second = kl::submit_result::rejected(kl::errc::timeout);
  std::thread{[&] { second = rt->submit("k", 2); }}.join();
  REQUIRE(first.ok());
  REQUIRE(second.ok());
  CHECK(first.seq() < second.seq());
  {
    std::lock_guard<std::mutex> guard{mtx};
    go = true;
  }
  cv.notify_all();
  event_ptr<int_rt> ev;
  for (int i = 0; i < 3; ++i)
    REQUIRE(rt->pull(ev, 10s));
  std::lock_guard<std::mutex> guard{seen_mtx};
  CHECK(seen == std::vector<int>{1, 2});
}
