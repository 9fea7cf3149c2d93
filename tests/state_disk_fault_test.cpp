// SPDX-License-Identifier: Apache-2.0
// Keyed state on a disk that fails: a state write the store refuses (a
// full disk, an I/O error) is never reported durable, is named in the log
// and the metrics, and is written whole once the disk works again; with
// state.sync = "every_event" the event's output waits for it, and a stop
// while the disk still fails lists the event instead of delivering it.

#include <catch2/catch.hpp>

#include <condition_variable>
#include <map>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

#include "keylane/detail/rocksdb_env.hpp"
#include "keylane/detail/state_record.hpp"
#include "keylane/state_store.hpp"
#include "log_capture.hpp"
#include "rocksdb_faults.hpp"
#include "state_support.hpp"

using namespace state_test;
using namespace std::chrono_literals;
namespace kl = keylane;
using disk_faults::fault;
using rt_type = kl::runtime<uint64_t, uint64_t>;

namespace {

/// What the runtime acknowledged: outputs and durable reports, by seq.
struct acks {
  std::mutex mtx;
  std::condition_variable cv;
  std::set<uint64_t> durable;
  std::set<uint64_t> output;

  void add_durable(const std::vector<uint64_t>& seqs) {
    std::lock_guard<std::mutex> guard{mtx};
    durable.insert(seqs.begin(), seqs.end());
    cv.notify_all();
  }
  void add_output(uint64_t seq) {
    std::lock_guard<std::mutex> guard{mtx};
    output.insert(seq);
    cv.notify_all();
  }
  /// Whether every seq of `seqs` is in `set` by `limit`.
  bool wait_all(std::set<uint64_t>& set, const std::vector<uint64_t>& seqs,
                std::chrono::seconds limit) {
    std::unique_lock<std::mutex> lk{mtx};
    return cv.wait_for(lk, limit, [&] {
      for (auto q : seqs)
        if (set.count(q) == 0)
          return false;
      return true;
    });
  }
  size_t count_in(std::set<uint64_t>& set, const std::vector<uint64_t>& seqs) {
    std::lock_guard<std::mutex> guard{mtx};
    size_t n = 0;
    for (auto q : seqs)
      n += set.count(q);
    return n;
  }
};

kl::settings fault_settings(const fs::path& dir,
                            disk_faults::rocksdb_faults& faults) {
  kl::settings s;
  s.threads = 2;
  s.order = kl::order_mode::per_key;
  s.state_store = kl::state_backend::rocksdb;
  s.state_path = (dir / "state").string();
  s.state_checkpoint_ms = 5;
  s.state_store_open = [path = s.state_path, env = faults.env()] {
    return kl::detail::open_rocksdb_state_store_on(env, path);
  };
  return s;
}

kl::handler_factory folding_factory() {
  return [](const kl::handler_params&) { return std::make_unique<folding>(); };
}

/// Waits until the runtime counted `n` failed state writes in all.
bool wait_failures(rt_type& rt, uint64_t n) {
  auto deadline = std::chrono::steady_clock::now() + 20s;
  while (rt.stats().state_write_failures < n)
    if (std::chrono::steady_clock::now() > deadline)
      return false;
    else
      std::this_thread::sleep_for(5ms);
  return true;
}

/// Each key's record in the store at `path`, opened afresh on a sound disk.
void check_store(const std::string& path, const std::map<uint64_t, fold>& want) {
  auto st = kl::open_rocksdb_state_store(path, true);
  REQUIRE(st);
  for (auto& [k, f] : want) {
    INFO("key " << k);
    auto got = (*st)->read(kl::key{k});
    REQUIRE(got);
    REQUIRE(*got);
    auto rec = kl::detail::decode_state_record(**got);
    REQUIRE(rec);
    CHECK(rec->events == f.count);
    CHECK(decoded(*rec) == f);
  }
}

const char* name_of(fault f) {
  return f == fault::no_space ? "no space" : "I/O error";
}

} // namespace

TEST_CASE("a state write the disk refuses is never reported durable, is "
          "named in the log and the metrics, and is written once the disk "
          "works again", "[state][disk]") {
  for (auto f : {fault::no_space, fault::io_error}) {
    INFO("fault: " << name_of(f));
    temp_dir dir;
    disk_faults::rocksdb_faults faults;
    log_capture::lines log;
    auto s = fault_settings(dir.path, faults);
    acks got;
    std::map<uint64_t, fold> want; // per key, in submission order
    auto rt = rt_type::start(s, folding_factory(), [&](rt_type::event_type& ev) {
      got.add_output(ev.seq);
    });
    REQUIRE(rt);
    (*rt)->set_log_writer(log.writer());
    (*rt)->on_state_durable(
      [&](const std::vector<uint64_t>& seqs) { got.add_durable(seqs); });
    uint64_t value = 0;
    auto submit_some = [&] {
      std::vector<uint64_t> seqs;
      for (int i = 0; i < 40; ++i) {
        auto k = static_cast<uint64_t>(i % 5);
        auto v = make_value(++value, act::now);
        auto res = (*rt)->submit(kl::key{k}, v);
        REQUIRE(res);
        want[k].apply(v);
        seqs.push_back(res.seq());
      }
      REQUIRE((*rt)->drain(30s)); // checkpoints: outputs do not wait
      return seqs;
    };
    REQUIRE(got.wait_all(got.durable, submit_some(), 20s));
    // Two failure streaks: each is logged once when it starts and once
    // when it ends.
    for (int streak = 1; streak <= 2; ++streak) {
      INFO("failure streak " << streak);
      auto before = (*rt)->stats().state_write_failures;
      faults.set(f);
      auto seqs = submit_some();
      REQUIRE(wait_failures(**rt, before + 2)); // a retry failed too
      CHECK(got.count_in(got.durable, seqs) == 0);
      auto st = (*rt)->stats();
      CHECK(st.state_pending > 0);
      CHECK(log.count("state_store_failed") == static_cast<size_t>(streak));
      faults.set(fault::none);
      INFO(log.all());
      REQUIRE(got.wait_all(got.durable, seqs, 20s));
      CHECK(log.wait_for("work again after").size() > 0);
      CHECK(log.count("work again after") == static_cast<size_t>(streak));
    }
    auto rep = (*rt)->stop();
    CHECK(rep.unfinished.empty());
    rt->reset();
    CHECK(faults.injected() > 0);
    check_store(s.state_path, want); // whole records, no torn one
  }
}

TEST_CASE("with state.sync = every_event an event's output waits while the "
          "disk refuses its state, comes once it is written, and a stop "
          "meanwhile lists the event instead of delivering it",
          "[state][disk]") {
  temp_dir dir;
  disk_faults::rocksdb_faults faults;
  log_capture::lines log;
  auto s = fault_settings(dir.path, faults);
  s.state_sync_mode = kl::state_sync::every_event;
  acks got;
  auto rt = rt_type::start(s, folding_factory(), [&](rt_type::event_type& ev) {
    got.add_output(ev.seq);
  });
  REQUIRE(rt);
  (*rt)->set_log_writer(log.writer());
  (*rt)->on_state_durable(
    [&](const std::vector<uint64_t>& seqs) { got.add_durable(seqs); });
  fold want;
  auto first = make_value(1, act::now);
  faults.set(fault::io_error);
  auto a = (*rt)->submit(kl::key{uint64_t{7}}, first);
  REQUIRE(a);
  want.apply(first);
  REQUIRE(wait_failures(**rt, 2)); // a retry failed too
  CHECK(got.count_in(got.output, {a.seq()}) == 0);
  CHECK(got.count_in(got.durable, {a.seq()}) == 0);
  faults.set(fault::none);
  INFO(log.all());
  REQUIRE(got.wait_all(got.output, {a.seq()}, 20s));
  CHECK(got.count_in(got.durable, {a.seq()}) == 1);

  // The disk fails again and stays failed through the stop.
  faults.set(fault::io_error);
  auto failures = (*rt)->stats().state_write_failures;
  auto b = (*rt)->submit(kl::key{uint64_t{7}}, make_value(2, act::now));
  REQUIRE(b);
  REQUIRE(wait_failures(**rt, failures + 2));
  // The disk comes back while the runtime stops, after the event was
  // given up: its state must not be written then either (it is listed).
  std::thread heal{[&] {
    log.wait_for("could not be written", 60s);
    faults.set(fault::none);
  }};
  auto rep = (*rt)->stop();
  heal.join();
  CHECK(got.count_in(got.output, {b.seq()}) == 0);
  CHECK(got.count_in(got.durable, {b.seq()}) == 0);
  CHECK(rep.delivered == 1);
  REQUIRE(rep.unfinished.size() == 1);
  CHECK(rep.unfinished[0].seq == b.seq());
  CHECK(log.count("could not be written") >= 1);
  rt->reset();
  check_store(s.state_path, {{7, want}}); // as of the event delivered
}
