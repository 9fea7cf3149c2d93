// SPDX-License-Identifier: Apache-2.0
// The SQLite park store on a disk that fails: a parking whose transaction
// the disk refuses is not acknowledged (no `parked` tombstone) and loses no
// event: it is tried again until the disk works, and a stop meanwhile
// lists its events.

#include <catch2/catch.hpp>

#include <algorithm>
#include <mutex>
#include <string>
#include <vector>

#include <keylane/runtime.hpp>

#include "log_capture.hpp"
#include "sqlite_faults.hpp"
#include "temp_dir.hpp"

using namespace keylane;
using namespace std::chrono_literals;

namespace {

using rt_type = runtime<std::string, std::string>;

struct refusing : handler<std::string, std::string> {
  void on_event(std::string& x, completion<std::string> done) override {
    if (x.rfind("bad", 0) == 0)
      return done.fail_permanently("refused: " + x);
    done.ok(x);
  }
};

bool wait_failures(rt_type& rt, uint64_t n) {
  auto deadline = std::chrono::steady_clock::now() + 20s;
  while (rt.stats().park_write_failures < n)
    if (std::chrono::steady_clock::now() > deadline)
      return false;
    else
      std::this_thread::sleep_for(5ms);
  return true;
}

} // namespace

TEST_CASE("a parking the disk refuses is not acknowledged, is named in the "
          "log and the metrics, and is written once the disk works again, and "
          "a stop meanwhile lists its events",
          "[park][disk]") {
  test_support::temp_dir dir;
  disk_faults::sqlite_faults faults;
  log_capture::lines log;
  settings s;
  s.threads = 2;
  s.order = order_mode::per_key;
  s.park = park_mode::sqlite;
  s.park_path = dir.sub("park.db");
  std::mutex mtx;
  std::vector<std::pair<outcome, std::string>> outs;
  auto count_outs = [&] {
    std::lock_guard<std::mutex> guard{mtx};
    return outs.size();
  };
  auto rt = rt_type::start(
    s, [](const handler_params&) { return std::make_unique<refusing>(); },
    [&](rt_type::event_type& ev) {
      std::lock_guard<std::mutex> guard{mtx};
      outs.emplace_back(ev.status, ev.error);
    });
  REQUIRE(rt);
  (*rt)->set_log_writer(log.writer());
  faults.set_failing(true);
  REQUIRE((*rt)->submit(key{std::string{"acct"}}, std::string{"bad-1"}));
  REQUIRE(wait_failures(**rt, 2)); // a second try failed too
  CHECK(faults.injected() > 0);
  CHECK(count_outs() == 0); // not acknowledged, as parked or otherwise
  CHECK(log.count("park_store_failed") == 1);
  faults.set_failing(false);
  REQUIRE((*rt)->drain(30s));
  {
    std::lock_guard<std::mutex> guard{mtx};
    REQUIRE(outs.size() == 1);
    INFO(outs[0].second);
    CHECK(outs[0].first == outcome::parked);
  }
  CHECK(log.wait_for("works again").size() > 0);
  auto evs = (*rt)->parked_events("acct");
  REQUIRE(evs);
  REQUIRE(evs->size() == 1); // kept, not lost
  CHECK((*evs)[0].payload == "bad-1");

  // The disk fails again and stays failed through the stop.
  faults.set_failing(true);
  auto failures = (*rt)->stats().park_write_failures;
  auto b = (*rt)->submit(key{std::string{"other"}}, std::string{"bad-2"});
  REQUIRE(b);
  REQUIRE(wait_failures(**rt, failures + 2));
  auto rep = (*rt)->stop();
  CHECK(count_outs() == 1);
  auto listed = std::find_if(rep.unfinished.begin(), rep.unfinished.end(),
                             [&](auto& u) { return u.seq == b.seq(); });
  REQUIRE(listed != rep.unfinished.end());
  CHECK_FALSE(listed->kept); // the store refused it at stop too
  CHECK(log.count("could not be parked before stop") >= 1);
  rt->reset();
  faults.set_failing(false);
  auto st = open_sqlite_park_store(s.park_path, sqlite_access::read_only);
  REQUIRE(st);
  auto recs = (*st)->records(key{std::string{"acct"}});
  REQUIRE(recs);
  CHECK(recs->size() == 1); // whole, nothing torn
  auto others = (*st)->records(key{std::string{"other"}});
  REQUIRE(others);
  CHECK(others->empty());
}
