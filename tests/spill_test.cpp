// SPDX-License-Identifier: Apache-2.0
// sink.spill_path: results beyond the in-memory window go to a spill file
// and come back in order; memory stays at the window, admission goes on
// until the file is full, and the file is removed at stop.

#include <catch2/catch.hpp>

#include <atomic>
#include <filesystem>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "log_capture.hpp"
#include "runtime_support.hpp"
#include "temp_dir.hpp"

using namespace runtime_support;
namespace fs = std::filesystem;
using test_support::temp_dir;

namespace {


// Item v takes 150 ms when v % 100 == 3, else 1 ms; result 2 v + 1.
kl::handler_factory straggling() {
  return from_fn<int, int>([](auto& h, int& v, kl::completion<int> done) {
    auto shared = std::make_shared<kl::completion<int>>(std::move(done));
    auto d = v % 100 == 3 ? 150ms : 1ms;
    h.run_later(d, [shared, v] { shared->ok(2 * v + 1); });
  });
}

kl::settings spill_settings(const temp_dir& dir) {
  auto s = two_threads();
  s.order = kl::order_mode::global;
  s.max_active_keys = 8;
  s.window = 16;
  s.spill_path = dir.path.string();
  return s;
}

// Holds item 0's completion until the test releases it, so everything
// behind it stays held back; other items finish at once with `2 v + 1`.
struct held_first {
  std::mutex mtx;
  std::shared_ptr<kl::completion<int>> first;

  kl::handler_factory factory() {
    return from_fn<int, int>([this](auto&, int& v, kl::completion<int> done) {
      if (v == 0) {
        std::lock_guard<std::mutex> guard{mtx};
        first = std::make_shared<kl::completion<int>>(std::move(done));
        return;
      }
      done.ok(2 * v + 1);
    });
  }

  // Finishes item 0 (with its `2 v + 1`); false if it never started.
  bool release() {
    std::lock_guard<std::mutex> guard{mtx};
    if (!first)
      return false;
    first->ok(1);
    first.reset();
    return true;
  }

  // Lets item 0's completion go unfinished (before the runtime stops).
  void drop() {
    std::lock_guard<std::mutex> guard{mtx};
    first.reset();
  }
};

struct checker {
  std::atomic<uint64_t> next{0};
  std::atomic<uint64_t> bad{0};
  void operator()(int_rt::event_type& ev) {
    if (ev.seq != next.load() || ev.status != kl::outcome::ok || !ev.result
        || *ev.result != 2 * ev.payload + 1 || ev.attempts != 1)
      ++bad;
    next = ev.seq + 1;
  }
};

} // namespace

TEST_CASE("spilled results come back in order with memory held at the window",
          "[spill]") {
  temp_dir dir;
  checker out;
  auto rt = start<int_rt>(spill_settings(dir), straggling(),
                          [&](int_rt::event_type& ev) { out(ev); });
  CHECK(dir.files() == 1);
  for (int i = 0; i < 400; ++i)
    REQUIRE(rt->submit(kl::key{uint64_t(i)}, i).ok());
  REQUIRE(rt->drain(60s));
  auto st = rt->stats();
  CHECK(out.next == 400);
  CHECK(out.bad == 0);
  CHECK(st.peak_sink_buffered <= 16);
  // Behind each 150 ms straggler ~8 items/ms complete: far beyond 16.
  CHECK(st.spilled > 100);
  CHECK(st.peak_spill_held > 16);
  CHECK(st.spill_held == 0);
  CHECK(st.spill_bytes == 0); // emptied once nothing in it was wanted
  // Auto and spill are alternatives, at reload too.
  auto next = rt->config();
  next.window_auto = true;
  CHECK_FALSE(rt->reload(next));
  CHECK_FALSE(rt->config().window_auto);
  auto report = rt->stop();
  CHECK(report.unfinished.empty());
  CHECK(dir.files() == 0);
}

TEST_CASE("a full spill file holds admission until output drains it",
          "[spill]") {
  temp_dir dir;
  checker out;
  log_capture::lines log;
  auto s = spill_settings(dir);
  s.overflow = kl::overflow_policy::reject;
  s.spill_max_bytes = 1500; // a few dozen records
  held_first held;
  auto rt = start<int_rt>(s, held.factory(),
                          [&](int_rt::event_type& ev) { out(ev); });
  rt->set_log_writer(log.writer());
  at_exit drop{[&] { held.drop(); }};
  // Far more rows than fill the file (a record is ~70 bytes); admission
  // may close before all are in.
  int next = 0;
  while (next < 200 && rt->submit(kl::key{uint64_t(next)}, next).ok())
    ++next;
  // The sink closes admission (window 0) once the file is full.
  REQUIRE(eventually([&] { return rt->stats().window == 0; }));
  CHECK(rt->stats().spill_bytes >= 1500);
  CHECK(rt->stats().sink_buffered <= 16);
  auto refused = rt->submit(kl::key{uint64_t(next)}, next);
  REQUIRE_FALSE(refused.ok());
  CHECK(refused.code() == kl::errc::window_full);
  CHECK(!log.wait_for("(sink.spill_max_bytes): admission waits").empty());
  // Item 0 may not have started yet: its shard can be behind the other,
  // whose results filled the file. Wait for it, then finish it.
  REQUIRE(eventually([&] { return held.release(); }));
  // Output drains the file, and admission opens again.
  auto held_at = next;
  REQUIRE(eventually([&] { return rt->submit(kl::key{uint64_t(next)}, next).ok(); }));
  ++next;
  REQUIRE(rt->drain(60s));
  CHECK(out.next == static_cast<uint64_t>(next));
  CHECK(out.bad == 0);
  CHECK(next == held_at + 1);
  CHECK(rt->stats().peak_sink_buffered <= 16);
}

TEST_CASE("stop reports spilled results as unfinished and removes the file",
          "[spill]") {
  temp_dir dir;
  auto s = spill_settings(dir);
  // Item 0 never completes: everything behind it is held, most on disk.
  auto make = from_fn<int, int>([](auto& h, int& v, kl::completion<int> done) {
    if (v == 0) {
      auto keep = std::make_shared<kl::completion<int>>(std::move(done));
      h.run_later(60s, [keep] { keep->ok(0); });
      return;
    }
    done.ok(v);
  });
  auto rt = start<int_rt>(s, make, [](int_rt::event_type&) {});
  for (int i = 0; i < 100; ++i)
    REQUIRE(rt->submit(kl::key{uint64_t(i)}, i).ok());
  REQUIRE(eventually([&] {
    auto st = rt->stats();
    return st.sink_buffered + st.spill_held == 99;
  }));
  CHECK(rt->stats().spill_held > 0);
  auto report = rt->stop();
  REQUIRE(report.unfinished.size() == 100);
  CHECK(report.unfinished[0].stage == "running");
  for (size_t i = 1; i < 100; ++i) {
    CHECK(report.unfinished[i].seq == i);
    CHECK(report.unfinished[i].stage == "completed");
  }
  CHECK(dir.files() == 0);
}

namespace {
struct opaque {
  int x = 0; // no inspect(): no codec
};
} // namespace

TEST_CASE("spill without codecs or with a bad directory fails the start",
          "[spill][errors]") {
  temp_dir dir;
  auto s = spill_settings(dir);
  auto make = from_fn<opaque, int>(
    [](auto&, opaque&, kl::completion<int> done) { done.ok(1); });
  auto r = kl::runtime<opaque, int>::start(s, make);
  REQUIRE_FALSE(r);
  CHECK(kl::render(r.error()).find("needs a keylane::codec") != std::string::npos);
  s.spill_path = "/proc/keylane-cannot-be-here";
  auto r2 = int_rt::start(s, straggling());
  REQUIRE_FALSE(r2);
  CHECK(r2.error() == kl::make_error(kl::errc::spill_failed, ""));
  CHECK(kl::render(r2.error()).find("cannot create directory") != std::string::npos);
}

TEST_CASE("a spill record that cannot be read back is reported lost, not "
          "delivered, and drain returns",
          "[spill]") {
  temp_dir dir;
  auto s = spill_settings(dir);
  held_first held;
  std::atomic<uint64_t> outputs{0};
  auto rt = start<int_rt>(s, held.factory(),
                          [&](int_rt::event_type&) { ++outputs; });
  log_capture::lines log;
  rt->set_log_writer(log.writer());
  for (int i = 0; i < 100; ++i)
    REQUIRE(rt->submit(kl::key{uint64_t(i)}, i).ok());
  REQUIRE(eventually([&] {
    auto st = rt->stats();
    return st.sink_buffered + st.spill_held == 99;
  }));
  auto spilled = rt->stats().spill_held;
  REQUIRE(spilled > 0);
  // The disk loses the file's contents under the runtime.
  for (auto& f : fs::directory_iterator{dir.path})
    fs::resize_file(f.path(), 0);
  REQUIRE(eventually([&] { return held.release(); })); // once item 0 started
  CHECK_FALSE(rt->drain(30s));
  auto st = rt->stats();
  CHECK(st.delivered == 100 - spilled);
  CHECK(outputs == 100 - spilled);
  CHECK(log.count("was it truncated?") == spilled);
  auto report = rt->stop();
  CHECK(report.delivered == 100 - spilled);
  REQUIRE(report.unfinished.size() == spilled);
  for (auto& u : report.unfinished)
    CHECK(u.stage == "lost in spill");
}
