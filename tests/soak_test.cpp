// SPDX-License-Identifier: Apache-2.0
// The soak: a million events from 4 producers through every fate the
// runtime knows, checked for per-key start order, one event of a key at a
// time, exactly-once delivery, the outcome and attempts each fate takes, and
// per-key and global output order; once parking in memory, once in SQLite.
// Hidden ([.soak]): CTest runs it as `soak.memory` and `soak.sqlite`
// (tests/CMakeLists.txt, label `soak`), sized by $KEYLANE_SOAK_EVENTS and
// $KEYLANE_SOAK_SQLITE_EVENTS.

#include <catch2/catch.hpp>

#include <stdlib.h>

#include <filesystem>
#include <map>
#include <set>

#include "property_support.hpp"
#include "soak_support.hpp"
#include "temp_dir.hpp"

using namespace keylane;
using namespace keylane::soak;
using test_support::temp_dir;

namespace {

using rt_type = runtime<item, uint64_t>;
using ev_type = rt_type::event_type;

size_t env_size(const char* name, size_t fallback) {
  if (auto* s = std::getenv(name); s && *s)
    return std::strtoull(s, nullptr, 10);
  return fallback;
}

struct soak_params {
  size_t events = 1000000;
  size_t keys = 1024;
  size_t producers = 4;
  order_mode order = order_mode::global;
  park_mode park = park_mode::memory;
  std::string park_path;
  uint32_t permanent_per_million = 100;
};

// Checks each output as it comes (on the consumer thread) and keeps only
// counts; the first few problems are kept as text.
class output_check {
public:
  output_check(const soak_params& p)
    : p_(p), seen_(p.events), last_seq_(p.keys, -1),
      last_index_(p.keys * p.producers, -1), parked_tail_(p.keys, 0) {}

  void take(const ev_type& e, std::vector<uint32_t>& to_discard) {
    ++count_;
    if (e.seq >= seen_.size()) {
      problem("seq " + std::to_string(e.seq) + " was never handed out");
      return;
    }
    if (seen_[e.seq]++ != 0)
      problem("seq " + std::to_string(e.seq) + " delivered twice");
    auto& x = e.payload;
    if (p_.order == order_mode::global && e.seq != next_global_)
      problem("global order: seq " + std::to_string(e.seq) + " came where "
              + std::to_string(next_global_) + " was due");
    next_global_ = e.seq + 1;
    auto& ls = last_seq_[x.key_id];
    if (static_cast<int64_t>(e.seq) <= ls)
      problem("key " + std::to_string(x.key_id) + ": seq "
              + std::to_string(e.seq) + " after " + std::to_string(ls));
    ls = static_cast<int64_t>(e.seq);
    auto& li = last_index_[x.key_id * p_.producers + x.producer];
    if (static_cast<int64_t>(x.index) <= li)
      problem("key " + std::to_string(x.key_id) + " producer "
              + std::to_string(x.producer) + ": index "
              + std::to_string(x.index) + " after " + std::to_string(li));
    li = static_cast<int64_t>(x.index);
    check_outcome(e, to_discard);
  }

  [[nodiscard]] uint64_t count() const { return count_; }
  [[nodiscard]] uint64_t problems() const { return problems_; }
  [[nodiscard]] uint64_t parked() const { return parked_; }
  [[nodiscard]] uint64_t parked_behind() const { return parked_behind_; }
  [[nodiscard]] const std::string& first_problems() const { return text_; }

  [[nodiscard]] uint64_t missing() const {
    uint64_t n = 0;
    for (auto x : seen_)
      n += x == 0;
    return n;
  }

private:
  void check_outcome(const ev_type& e, std::vector<uint32_t>& to_discard) {
    auto& x = e.payload;
    auto f = fate_of(x);
    auto& tail = parked_tail_[x.key_id];
    if (e.status == outcome::parked) {
      ++parked_;
      if (f == fate::permanent && !tail) {
        if (e.attempts != 1)
          problem("seq " + std::to_string(e.seq) + " parked after "
                  + std::to_string(e.attempts) + " attempts, want 1");
        to_discard.push_back(x.key_id); // let the key go on
      } else if (tail) {
        ++parked_behind_; // behind its key's parked event
      } else {
        problem("seq " + std::to_string(e.seq) + " of key "
                + std::to_string(x.key_id) + " parked with nothing parked "
                "ahead of it: " + e.error);
      }
      tail = true;
      return;
    }
    tail = false;
    auto want = f == fate::skip        ? outcome::skipped
                : f == fate::permanent ? outcome::parked
                                       : outcome::ok;
    if (e.status != want)
      problem("seq " + std::to_string(e.seq) + " came out "
              + to_string(e.status) + ", want " + to_string(want) + ": "
              + e.error);
    else if (want == outcome::ok
             && (!e.result || *e.result != expected_result(x)))
      problem("seq " + std::to_string(e.seq) + ": wrong result");
    if (e.attempts != want_attempts(x) || x.tries != e.attempts)
      problem("seq " + std::to_string(e.seq) + ": "
              + std::to_string(e.attempts) + " attempts counted, "
              + std::to_string(x.tries) + " seen, want "
              + std::to_string(want_attempts(x)));
  }

  void problem(std::string what) {
    if (problems_++ < 8)
      text_ += "\n  " + what;
  }

  const soak_params& p_;
  std::vector<uint8_t> seen_;
  std::vector<int64_t> last_seq_;
  std::vector<int64_t> last_index_;
  std::vector<uint8_t> parked_tail_; // the key's last output was parked
  uint64_t next_global_ = 0;
  uint64_t count_ = 0;
  uint64_t problems_ = 0;
  uint64_t parked_ = 0;
  uint64_t parked_behind_ = 0;
  std::string text_;
};

void run_soak(const soak_params& sp, uint64_t seed) {
  auto describe = "seed " + std::to_string(seed) + " (rerun with KEYLANE_SEED="
                  + std::to_string(seed) + "), "
                  + std::to_string(sp.events) + " events, order "
                  + to_string(sp.order) + ", park " + to_string(sp.park);
  INFO(describe);
  auto work = make_workload(seed, sp.events, sp.keys, sp.producers,
                            sp.permanent_per_million);
  inside in{sp.keys, sp.producers};
  output_check check{sp};
  std::atomic<uint64_t> accepted{0};
  std::atomic<uint64_t> outputs{0};
  // Keys whose parked events the discarder drops, so they go on.
  std::mutex discard_mtx;
  std::condition_variable discard_cv;
  std::vector<uint32_t> discard_queue;
  bool discard_done = false;
  uint64_t discarded = 0, discard_errors = 0;
  auto started_at = std::chrono::steady_clock::now();
  {
    settings cfg;
    cfg.max_active_keys = 64;
    cfg.window = 4096;
    cfg.order = sp.order;
    cfg.overflow = overflow_policy::block;
    cfg.threads = 2;
    cfg.max_attempts = 3;
    cfg.initial_backoff_ms = 1;
    cfg.max_backoff_ms = 1;
    cfg.attempt_timeout_ms = 5000; // armed for every async attempt, never due
    cfg.park = sp.park;
    cfg.park_path = sp.park_path;
    cfg.log = log_level::error;
    handler_factory make = [&in](const handler_params&) {
      return std::make_unique<soak::handler>(&in);
    };
    std::vector<uint32_t> found; // the consumer thread's only
    auto started = rt_type::start(cfg, make, [&](ev_type& e) {
      found.clear();
      check.take(e, found);
      ++outputs;
      if (!found.empty()) {
        { std::lock_guard<std::mutex> guard{discard_mtx};
          discard_queue.insert(discard_queue.end(), found.begin(), found.end()); }
        discard_cv.notify_one();
      }
    });
    REQUIRE(started);
    auto& rt = **started;
    test::watchdog dog{"the soak's producers, " + describe,
                       [&] { return accepted.load() + outputs.load(); },
                       [&] {
                         auto st = rt.stats();
                         return "accepted " + std::to_string(st.accepted)
                                + ", delivered " + std::to_string(st.delivered)
                                + ", awaited seq "
                                + std::to_string(st.awaited_seq)
                                + ", parked " + std::to_string(st.parked);
                       }};
    std::thread discarder{[&] {
      std::unique_lock<std::mutex> guard{discard_mtx};
      for (;;) {
        discard_cv.wait(guard, [&] { return discard_done || !discard_queue.empty(); });
        if (discard_queue.empty())
          return;
        auto keys = std::move(discard_queue);
        discard_queue.clear();
        guard.unlock();
        for (auto k : keys) {
          if (auto n = rt.discard(key{uint64_t{k}}))
            discarded += *n;
          else
            ++discard_errors;
        }
        guard.lock();
      }
    }};
    std::atomic<uint64_t> rejected{0};
    std::vector<std::thread> producers;
    for (size_t p = 0; p < sp.producers; ++p)
      producers.emplace_back([&, p] {
        for (auto& x : work[p]) {
          auto res = rt.submit(key{uint64_t{x.key_id}}, x);
          if (!res) { // overflow = block: only a stopped runtime rejects
            ++rejected;
            return;
          }
          ++accepted;
        }
      });
    for (auto& t : producers)
      t.join();
    CHECK(rejected == 0);
    REQUIRE(accepted == sp.events);
    dog.stage("the soak's drain, " + describe);
    CHECK(rt.drain(std::chrono::seconds(600)));
    in.late.stop();
    {
      std::lock_guard<std::mutex> guard{discard_mtx};
      discard_done = true;
    }
    discard_cv.notify_one();
    discarder.join();
    auto st = rt.stats();
    auto still_parked = rt.parked_keys();
    auto report = rt.stop();
    auto secs = std::chrono::duration<double>(std::chrono::steady_clock::now()
                                              - started_at).count();
    WARN("soak " << describe << ": " << secs << " s, "
                 << static_cast<uint64_t>(sp.events / secs) << " events/s; "
                 << st.retries << " retries, " << check.parked() << " parked ("
                 << check.parked_behind() << " behind), " << discarded
                 << " discarded, " << st.lanes_spawned << " lane starts, "
                 << (still_parked ? still_parked->size() : 0)
                 << " keys parked at the end");
    CHECK(report.unfinished.empty());
    CHECK(report.delivered == sp.events);
    CHECK(st.ok + st.skipped + st.failed + st.parked == sp.events);
    CHECK(st.failed == 0);
    CHECK(st.peak_active_lanes <= cfg.max_active_keys);
    CHECK(discard_errors == 0);
  }
  INFO("first problems:" << check.first_problems());
  CHECK(check.problems() == 0);
  CHECK(check.count() == sp.events);
  CHECK(check.missing() == 0);
  CHECK(in.overlap == 0);
  CHECK(in.out_of_order == 0);
}

} // namespace

TEST_CASE("a million events or more of every fate keep per-key start order, come out "
          "exactly once and in global order, parking in memory",
          "[.soak]") {
  soak_params sp;
  sp.events = env_size("KEYLANE_SOAK_EVENTS", 1000000);
  run_soak(sp, test::test_seed());
}

TEST_CASE("the soak holds with the SQLite park store, in per-key order",
          "[.soak][durable]") {
  temp_dir dir;
  soak_params sp;
  sp.events = env_size("KEYLANE_SOAK_SQLITE_EVENTS", 200000);
  sp.order = order_mode::per_key;
  sp.park = park_mode::sqlite;
  sp.park_path = (dir.path / "parked.db").string();
  // Parking in SQLite is slow (one write per event): few permanent failures.
  sp.permanent_per_million = 100;
  run_soak(sp, test::test_seed() + 1);
}
