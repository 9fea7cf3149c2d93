// SPDX-License-Identifier: Apache-2.0
// What applied_events() counts: the key's events that ended ok, whose
// changes its state holds. A skip (the handler's "nothing to do") and a
// failure are not counted, so a handler that numbers a key's events and
// drops a redelivered one by that count keeps taking the new ones.

#include <catch2/catch.hpp>

#include <map>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

#include "keylane/detail/state_record.hpp"
#include "keylane/state_store.hpp"
#include "state_support.hpp"

using namespace state_test;
using namespace std::chrono_literals;
namespace kl = keylane;
using rt_type = kl::runtime<uint64_t, uint64_t>;

namespace {

kl::settings rocksdb_settings(const fs::path& dir) {
  kl::settings s;
  s.max_attempts = 1; // the default before 0.2.0
  s.threads = 2;
  s.order = kl::order_mode::per_key;
  s.state_store = kl::state_backend::rocksdb;
  s.state_path = (dir / "state").string();
  s.lane_linger_ms = 0; // the key's state crosses lanes through the store
  s.initial_backoff_ms = 0;
  s.max_backoff_ms = 0;
  return s;
}

kl::detail::state_record stored(const kl::settings& s, uint64_t k) {
  auto st = kl::open_rocksdb_state_store(s.state_path, true);
  REQUIRE(st);
  auto got = (*st)->read(kl::key{k});
  REQUIRE(got);
  REQUIRE(*got);
  auto rec = kl::detail::decode_state_record(**got);
  REQUIRE(rec);
  return *rec;
}

struct outputs {
  std::mutex mtx;
  std::vector<std::pair<kl::outcome, uint64_t>> seen; // outcome, payload

  void add(rt_type::event_type& ev) {
    std::lock_guard<std::mutex> guard{mtx};
    seen.emplace_back(ev.status, ev.payload);
  }
  int count(kl::outcome o) {
    std::lock_guard<std::mutex> guard{mtx};
    int n = 0;
    for (auto& [st, p] : seen)
      n += st == o;
    return n;
  }
};

} // namespace

TEST_CASE("a handler that drops an event whose number is below "
          "applied_events() drops the redelivered ones and applies every new "
          "one",
          "[state][applied]") {
  // The source numbers each key's events 0, 1, 2, ... and, after a crash
  // that lost its commits, delivers some again.
  struct numbered : kl::stateful_handler<uint64_t, uint64_t, fold> {
    void on_event(uint64_t& idx, kl::completion<uint64_t> done) override {
      if (idx < applied_events()) {
        done.skip();
        return;
      }
      state().apply(idx);
      done.ok(state().count);
    }
  };
  temp_dir dir;
  auto s = rocksdb_settings(dir.path);
  auto factory = [](const kl::handler_params&) {
    return std::make_unique<numbered>();
  };
  outputs out;
  // First life: 0..9. Second life: 5..9 again, then the new 10..19.
  for (auto [from, to] : {std::pair{0, 10}, std::pair{5, 20}}) {
    auto rt = rt_type::start(s, factory,
                             [&](rt_type::event_type& ev) { out.add(ev); });
    REQUIRE(rt);
    for (int i = from; i < to; ++i)
      REQUIRE((*rt)->submit(kl::key{uint64_t{7}}, uint64_t(i)));
    REQUIRE((*rt)->drain(10s));
    CHECK((*rt)->stop().unfinished.empty());
  }
  CHECK(out.count(kl::outcome::ok) == 20);
  CHECK(out.count(kl::outcome::skipped) == 5);
  fold f;
  for (uint64_t i = 0; i < 20; ++i)
    f.apply(i);
  auto rec = stored(s, 7);
  CHECK(decoded(rec) == f);
  CHECK(rec.events == 20);
}

TEST_CASE("applied_events() counts a key's events that ended ok, not those "
          "it skipped or that failed for good, across the key's lanes",
          "[state][applied]") {
  // The value's low bits say what the event does: 0 ok, 1 skip, 2 fail.
  // Each answers the count it saw before it ran.
  struct counting : kl::stateful_handler<uint64_t, uint64_t, fold> {
    void on_event(uint64_t& v, kl::completion<uint64_t> done) override {
      auto before = applied_events();
      state().apply(v);
      switch (v % 4) {
        case 1:
          done.skip();
          return;
        case 2:
          done.fail("planned");
          return;
        default:
          done.ok(before);
      }
    }
  };
  temp_dir dir;
  auto s = rocksdb_settings(dir.path);
  s.max_attempts = 1;
  s.park = kl::park_mode::none; // a failure ends the event
  auto factory = [](const kl::handler_params&) {
    return std::make_unique<counting>();
  };
  std::mutex mtx;
  std::vector<uint64_t> answers;
  {
    auto rt = rt_type::start(s, factory, [&](rt_type::event_type& ev) {
      std::lock_guard<std::mutex> guard{mtx};
      if (ev.status == kl::outcome::ok)
        answers.push_back(*ev.result);
    });
    REQUIRE(rt);
    // ok, skip, fail, ok, fail, skip, ok, then the key retires and comes
    // back (linger 0) for one more ok.
    for (uint64_t v : {0, 1, 2, 4, 6, 5, 8})
      REQUIRE((*rt)->submit(kl::key{uint64_t{3}}, v));
    REQUIRE((*rt)->drain(10s));
    std::this_thread::sleep_for(50ms);
    REQUIRE((*rt)->submit(kl::key{uint64_t{3}}, uint64_t{12}));
    REQUIRE((*rt)->drain(10s));
    CHECK((*rt)->stop().unfinished.empty());
  }
  CHECK(answers == std::vector<uint64_t>{0, 1, 2, 3});
  auto rec = stored(s, 3);
  CHECK(rec.events == 4);
  // The skips' changes stay (a skip is not a failure); the failures' are
  // taken back.
  fold f;
  for (uint64_t v : {0, 1, 4, 5, 8, 12})
    f.apply(v);
  CHECK(decoded(rec) == f);
}
