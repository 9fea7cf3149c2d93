// SPDX-License-Identifier: Apache-2.0
// The stall log: when output waits for one event while later results are
// held back, one line names the key, the sequence number, its age and what
// holds it (running, backing off, waiting for a slot); one line says when
// it clears.

#include <catch2/catch.hpp>

#include <chrono>
#include <string>

#include "hold_support.hpp"
#include "log_capture.hpp"
#include "runtime_support.hpp"

using namespace runtime_support;
using hold_support::holder;

namespace {

// Outputs are taken and dropped (without a callback, drain waits for pulls).
void ignore(int_rt::event_type&) {}

kl::settings stall_settings(size_t stall_ms) {
  auto s = two_threads();
  s.order = kl::order_mode::global;
  s.stall_ms = stall_ms;
  s.lane_linger_ms = 0;
  return s;
}

std::unique_ptr<int_rt> start_held(kl::settings s, holder& h,
                                   log_capture::lines& log) {
  auto rt = start<int_rt>(std::move(s), hold_support::factory(&h), ignore);
  rt->set_log_writer(log.writer());
  return rt;
}

} // namespace

TEST_CASE("a stalled event is logged once with its key and lane state, and "
          "again when it clears",
          "[stall][log]") {
  holder h;
  h.hold = {0};
  log_capture::lines log;
  // Off at start: the reload below turns it on, so reload reaches the sink.
  auto rt = start_held(stall_settings(0), h, log);
  at_exit drop{[&] { h.release_all(); }};
  REQUIRE(rt->submit("slow", 0).ok());
  for (int i = 1; i <= 5; ++i)
    REQUIRE(rt->submit("fast-" + std::to_string(i), i).ok());
  REQUIRE(h.wait_held(1));
  REQUIRE(eventually([&] { return rt->stats().sink_buffered == 5; }));
  auto s = rt->config();
  s.stall_ms = 50;
  REQUIRE(rt->reload(s));
  auto line = log.wait_for("stall: output waits for seq 0");
  INFO(log.all());
  CHECK(line.find("(key slow)") != std::string::npos);
  CHECK(line.find("5 later results held back") != std::string::npos);
  CHECK(line.find("its lane is running attempt 1 of 1 for") != std::string::npos);
  h.release(0);
  auto cleared = log.wait_for("stall cleared: seq 0");
  CHECK(cleared.find("(key slow) reached the output after") != std::string::npos);
  REQUIRE(rt->drain(10s));
  CHECK(log.count("stall: ") == 1);
  CHECK(log.count("stall cleared") == 1);
}

TEST_CASE("a stall log names a lane backing off and its last error",
          "[stall][log][retry]") {
  holder h;
  h.fail_once = {0};
  log_capture::lines log;
  auto s = stall_settings(50);
  s.max_attempts = 3;
  s.initial_backoff_ms = 60000; // stays backing off for the whole test
  auto rt = start_held(s, h, log);
  REQUIRE(rt->submit("flaky", 0).ok());
  for (int i = 1; i <= 3; ++i)
    REQUIRE(rt->submit("fast-" + std::to_string(i), i).ok());
  auto line = log.wait_for("stall: output waits for seq 0");
  INFO(log.all());
  CHECK(line.find("(key flaky)") != std::string::npos);
  CHECK(line.find("its lane is backing off before attempt 2 of 3 (last "
                  "error: db down)")
        != std::string::npos);
  // It never finished; the three behind it finished but were held back.
  auto report = rt->stop();
  REQUIRE(report.unfinished.size() == 4);
  CHECK(report.unfinished[0].seq == 0);
  CHECK(report.unfinished[0].stage == "running");
}

TEST_CASE("a stall log names a key waiting for a lane slot",
          "[stall][log][cap]") {
  holder h;
  h.hold = {0, 3};
  log_capture::lines log;
  auto s = stall_settings(50);
  s.max_active_keys = 1;
  auto rt = start_held(s, h, log);
  at_exit drop{[&] { h.release_all(); }};
  // `a` holds the only slot: seq 0 until released, then seq 2, then seq 3
  // (held again); `w` (seq 1) waits for the slot behind it.
  REQUIRE(rt->submit("a", 0).ok());
  REQUIRE(rt->submit("w", 1).ok());
  REQUIRE(rt->submit("a", 2).ok());
  REQUIRE(rt->submit("a", 3).ok());
  REQUIRE(h.wait_held(1));
  // Every event is routed (a's are in its lane) before seq 0 completes, so
  // the lane of `a` never runs dry and keeps the slot.
  REQUIRE(eventually([&] {
    auto st = rt->stats();
    return st.ingress_depth == 0 && st.waiting_keys == 1;
  }));
  h.release(0);
  auto line = log.wait_for("stall: output waits for seq 1");
  INFO(log.all());
  CHECK(line.find("(key w)") != std::string::npos);
  CHECK(line.find("its key waits for a lane slot (all 1 in use, 0 keys ahead)")
        != std::string::npos);
  h.release_all();
  CHECK(!log.wait_for("stall cleared: seq 1 (key w)").empty());
  REQUIRE(rt->drain(10s));
}

TEST_CASE("no stall is logged while output flows or with stall_ms = 0",
          "[stall][log]") {
  holder h;
  h.hold = {0};
  log_capture::lines log;
  auto rt = start_held(stall_settings(0), h, log);
  REQUIRE(rt->submit("slow", 0).ok());
  REQUIRE(rt->submit("fast", 1).ok());
  REQUIRE(h.wait_held(1));
  REQUIRE(eventually([&] { return rt->stats().sink_buffered == 1; }));
  // Held back for well over any threshold, but the log is off.
  REQUIRE(eventually([&] { return rt->stats().awaited_age > 200ms; }));
  h.release(0);
  REQUIRE(rt->drain(10s));
  CHECK(log.count("stall") == 0);
}
