// SPDX-License-Identifier: Apache-2.0
// Retry at the head of the lane: attempts, backoff bounds, timeouts with
// late completions, and isolation of a backing-off key.

#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <map>
#include <mutex>
#include <optional>
#include <random>
#include <stdexcept>
#include <thread>
#include <vector>

#include <keylane/detail/backoff.hpp>
#include <keylane/runtime.hpp>

using namespace keylane;
using namespace std::chrono;

namespace {

// Payload: how many attempts fail before one succeeds, and how they fail.
struct job {
  uint32_t fail_first = 0;
  enum { fail, raise, permanent, hang, until_released } how = fail;
  uint64_t id = 0;
};

using rt_type = runtime<job, uint64_t>;
using ev_type = rt_type::event_type;

// Records attempt start times per job id; the next event of a key must
// never start while one is running.
struct journal {
  std::mutex mtx;
  std::map<uint64_t, std::vector<steady_clock::time_point>> starts;
  std::map<uint64_t, std::vector<std::optional<steady_clock::time_point>>>
    deadlines; // as each attempt's completion gave them
  std::map<uint64_t, completion<uint64_t>> hung; // first attempts left open
  std::atomic<int> running{0};
  std::atomic<int> overlaps{0};
  std::atomic<bool> released{false};
};

class flaky : public handler<job, uint64_t> {
public:
  explicit flaky(journal* j) : j_(j) {}
  void on_event(job& x, completion<uint64_t> done) override {
    if (j_->running.exchange(1) != 0)
      ++j_->overlaps;
    size_t attempt;
    {
      std::lock_guard<std::mutex> guard{j_->mtx};
      auto& v = j_->starts[x.id];
      v.push_back(steady_clock::now());
      attempt = v.size();
      j_->deadlines[x.id].push_back(done.deadline());
    }
    if (x.how == job::until_released ? j_->released.load()
                                     : attempt > x.fail_first) {
      j_->running = 0;
      done.ok(attempt);
      return;
    }
    j_->running = 0;
    switch (x.how) {
      case job::fail: done.fail("transient " + std::to_string(attempt)); break;
      case job::raise: throw std::runtime_error("boom " + std::to_string(attempt));
      case job::permanent: done.fail_permanently("gone for good"); break;
      case job::until_released: done.fail("not yet"); break;
      case job::hang: {
        std::lock_guard<std::mutex> guard{j_->mtx};
        j_->hung.emplace(x.id, std::move(done)); // finished late by the test
        break;
      }
    }
  }

private:
  journal* j_;
};

settings retry_settings(size_t attempts) {
  settings s;
  s.threads = 2;
  s.max_active_keys = 8;
  s.window = unbounded;
  s.order = order_mode::none;
  s.max_attempts = attempts;
  s.initial_backoff_ms = 5;
  s.backoff_multiplier = 2.0;
  s.max_backoff_ms = 20;
  return s;
}

std::unique_ptr<rt_type> start(settings s, journal& j) {
  handler_factory make = [&j](const handler_params&) {
    return std::make_unique<flaky>(&j);
  };
  auto rt = rt_type::start(std::move(s), make);
  REQUIRE(rt);
  return std::move(*rt);
}

std::unique_ptr<ev_type> pull_one(rt_type& rt) {
  std::unique_ptr<ev_type> e;
  REQUIRE(rt.pull(e, seconds(30)));
  return e;
}

} // namespace

TEST_CASE("backoff delays grow by the multiplier up to the cap, and full "
          "jitter stays within [0, cap]",
          "[retry][backoff]") {
  settings s;
  s.initial_backoff_ms = 10;
  s.backoff_multiplier = 3.0;
  s.max_backoff_ms = 200;
  CHECK(detail::backoff_cap(s, 1) == milliseconds(10));
  CHECK(detail::backoff_cap(s, 2) == milliseconds(30));
  CHECK(detail::backoff_cap(s, 3) == milliseconds(90));
  CHECK(detail::backoff_cap(s, 4) == milliseconds(200));
  CHECK(detail::backoff_cap(s, 4000) == milliseconds(200));
  CHECK(detail::backoff_delay(s, 2, 12345) == milliseconds(30));
  s.jitter = jitter_mode::full;
  auto seed = std::random_device{}();
  INFO("seed " << seed);
  detail::jitter_rng rng{seed};
  microseconds lo = microseconds::max(), hi{0};
  for (int i = 0; i < 20000; ++i) {
    auto failed = static_cast<uint32_t>(1 + i % 6);
    auto d = detail::backoff_delay(s, failed, rng());
    REQUIRE(d >= microseconds(0));
    REQUIRE(d <= detail::backoff_cap(s, failed));
    if (failed == 4) {
      lo = std::min(lo, d);
      hi = std::max(hi, d);
    }
  }
  // The draws cover the range, not one point of it.
  CHECK(lo < milliseconds(20));
  CHECK(hi > milliseconds(180));
  CHECK(detail::backoff_delay(s, 4, 0) == microseconds(0));
  CHECK(detail::backoff_delay(s, 4, ~uint64_t{0}) == milliseconds(200));
}

TEST_CASE("a transient failure is retried at the head of its lane with "
          "exact attempt counts and spaced attempts",
          "[retry]") {
  journal j;
  auto rt = start(retry_settings(4), j);
  // Key A: fails twice, then succeeds; its second event must wait.
  REQUIRE(rt->submit("A", job{2, job::fail, 1}));
  REQUIRE(rt->submit("A", job{0, job::fail, 2}));
  auto first = pull_one(*rt);
  auto second = pull_one(*rt);
  CHECK(first->payload.id == 1);
  CHECK(first->status == outcome::ok);
  CHECK(first->attempts == 3);
  CHECK(first->result == 3u);
  CHECK(second->payload.id == 2);
  CHECK(second->attempts == 1);
  std::lock_guard<std::mutex> guard{j.mtx};
  auto& t = j.starts[1];
  REQUIRE(t.size() == 3);
  // Lower bounds only: the timers never fire early.
  CHECK(t[1] - t[0] >= milliseconds(5));
  CHECK(t[2] - t[1] >= milliseconds(10));
  // The key's next event started only after the retried one finished.
  CHECK(j.starts[2].front() >= t[2]);
  CHECK(j.overlaps == 0);
  rt->stop();
}

TEST_CASE("exhausted attempts fail the event with the last error, "
          "exceptions are retried, permanent failures are not",
          "[retry]") {
  journal j;
  auto cfg = retry_settings(3);
  cfg.park = park_mode::none; // parking has its own tests
  auto rt = start(cfg, j);
  REQUIRE(rt->submit("A", job{10, job::fail, 1}));
  REQUIRE(rt->submit("B", job{1, job::raise, 2}));
  REQUIRE(rt->submit("C", job{10, job::permanent, 3}));
  std::map<uint64_t, std::unique_ptr<ev_type>> out;
  for (int i = 0; i < 3; ++i) {
    auto e = pull_one(*rt);
    out[e->payload.id] = std::move(e);
  }
  CHECK(out[1]->status == outcome::failed);
  CHECK(out[1]->attempts == 3);
  CHECK(out[1]->error == "transient 3");
  CHECK(out[2]->status == outcome::ok);
  CHECK(out[2]->attempts == 2);
  CHECK(out[3]->status == outcome::failed);
  CHECK(out[3]->attempts == 1);
  CHECK(out[3]->error == "gone for good");
  rt->stop();
}

TEST_CASE("an attempt that times out is retried and its late completion is "
          "never applied",
          "[retry][timeout]") {
  journal j;
  auto s = retry_settings(2);
  s.attempt_timeout_ms = 30;
  auto rt = start(s, j);
  REQUIRE(rt->submit("A", job{1, job::hang, 1}));
  auto e = pull_one(*rt);
  CHECK(e->status == outcome::ok);
  CHECK(e->attempts == 2);
  CHECK(e->result == 2u);
  // Finish the first, timed-out attempt now: it must change nothing.
  {
    std::lock_guard<std::mutex> guard{j.mtx};
    REQUIRE(j.hung.count(1) == 1);
    j.hung.at(1).ok(111);
  }
  REQUIRE(rt->submit("A", job{0, job::fail, 2}));
  auto next = pull_one(*rt);
  CHECK(next->payload.id == 2);
  CHECK(next->status == outcome::ok);
  CHECK(next->result == 1u);
  std::unique_ptr<ev_type> extra;
  CHECK_FALSE(rt->try_pull(extra));
  CHECK(rt->stats().delivered == 2);
  rt->stop();
}

TEST_CASE("a completion gives its attempt's deadline: attempt_timeout_ms "
          "after the runtime started that attempt, none without a timeout",
          "[retry][timeout]") {
  journal j;
  auto s = retry_settings(2);
  s.attempt_timeout_ms = 40;
  auto rt = start(s, j);
  auto before = steady_clock::now();
  REQUIRE(rt->submit("A", job{1, job::hang, 1}));
  auto e = pull_one(*rt);
  REQUIRE(e->attempts == 2);
  {
    std::lock_guard<std::mutex> guard{j.mtx};
    auto& d = j.deadlines.at(1);
    auto& at = j.starts.at(1);
    REQUIRE(d.size() == 2);
    REQUIRE(d[0]);
    REQUIRE(d[1]);
    // The runtime starts an attempt after the submit and before the
    // handler's first line; the second only after the first timed out
    // and backed off.
    CHECK(*d[0] >= before + milliseconds(40));
    CHECK(*d[0] <= at[0] + milliseconds(40));
    CHECK(*d[1] >= *d[0] + milliseconds(40 + 5));
    CHECK(*d[1] <= at[1] + milliseconds(40));
    // Still there once the completion has moved and its attempt timed out.
    REQUIRE(j.hung.count(1) == 1);
    CHECK(j.hung.at(1).deadline() == d[0]);
    CHECK(std::move(j.hung.at(1)).share().deadline() == d[0]);
  }
  rt->stop();

  journal plain;
  auto untimed = start(retry_settings(2), plain);
  REQUIRE(untimed->submit("A", job{1, job::fail, 2}));
  CHECK(pull_one(*untimed)->attempts == 2);
  {
    std::lock_guard<std::mutex> guard{plain.mtx};
    auto& d = plain.deadlines.at(2);
    REQUIRE(d.size() == 2);
    CHECK_FALSE(d[0]);
    CHECK_FALSE(d[1]);
  }
  untimed->stop();
}

TEST_CASE("a key that backs off delays no other key", "[retry][isolation]") {
  journal j;
  auto s = retry_settings(1000000);
  s.max_active_keys = 2; // A holds one slot while it retries
  auto rt = start(s, j);
  // A fails until released; everything else must flow past it meanwhile.
  REQUIRE(rt->submit("A", job{0, job::until_released, 1}));
  // Wait (bounded) until A has failed once, so it is surely retrying while
  // the other keys' events go through.
  auto deadline = steady_clock::now() + seconds(30);
  auto a_started = [&j] {
    std::lock_guard<std::mutex> guard{j.mtx};
    return j.starts.count(1) > 0;
  };
  while (!a_started() && steady_clock::now() < deadline)
    std::this_thread::yield();
  REQUIRE(a_started());
  for (uint64_t i = 0; i < 20; ++i)
    REQUIRE(rt->submit("B" + std::to_string(i % 4), job{0, job::fail, 100 + i}));
  for (int i = 0; i < 20; ++i)
    CHECK(pull_one(*rt)->payload.id >= 100);
  j.released = true;
  auto a = pull_one(*rt);
  CHECK(a->payload.id == 1);
  CHECK(a->status == outcome::ok);
  CHECK(a->attempts >= 2);
  rt->stop();
}
