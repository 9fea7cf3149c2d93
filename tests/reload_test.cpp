// SPDX-License-Identifier: Apache-2.0
// Reload at run time: which keys apply, what a bad file does, and that the
// cap, the window and the retry policy change while events flow.

#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <string>
#include <tuple>
#include <unistd.h>

#include "hold_support.hpp"
#include "log_capture.hpp"
#include "runtime_support.hpp"

#include "keylane/config_loader.hpp"

using namespace runtime_support;
using hold_support::holder;

namespace {

// Outputs are taken and dropped (without a callback, drain waits for pulls).
void ignore(int_rt::event_type&) {}

// A config file in the temp directory, removed at scope exit.
struct temp_config {
  std::filesystem::path path;
  explicit temp_config(const std::string& name)
    : path(std::filesystem::temp_directory_path()
           / ("keylane-reload-" + name + "-" + std::to_string(::getpid())
              + ".toml")) {}
  ~temp_config() {
    std::error_code ec;
    std::filesystem::remove(path, ec);
  }
  void write(const std::string& text) const {
    std::ofstream{path} << text;
  }
};

std::vector<std::string> keys_of(const std::vector<kl::setting_change>& xs) {
  std::vector<std::string> out;
  for (auto& x : xs)
    out.push_back(x.key);
  return out;
}

} // namespace

TEST_CASE("a reload applies run-time keys and reports the restart-only ones",
          "[reload]") {
  temp_config file{"apply"};
  file.write("[runtime]\nmax_active_keys = 8\nwindow = 100\norder = "
             "\"global\"\n[scheduler]\nthreads = 2\n[retry]\nmax_attempts = 1\n"
             "[log]\nlevel = \"info\"\n[park]\nstore = \"none\"\n");
  auto s = kl::load(file.path.string());
  REQUIRE(s);
  holder h;
  log_capture::lines log;
  auto rt = start<int_rt>(*s, hold_support::factory(&h), ignore);
  rt->set_log_writer(log.writer());
  file.write("[runtime]\nmax_active_keys = 4\nwindow = 50\norder = \"none\"\n"
             "[scheduler]\nthreads = 2\n[retry]\nmax_attempts = 3\n"
             "[log]\nlevel = \"info\"\n[park]\nstore = \"none\"\n");
  auto rep = rt->reload(file.path.string());
  REQUIRE(rep);
  CHECK(keys_of(rep->applied)
        == std::vector<std::string>{"runtime.max_active_keys",
                                    "runtime.window", "retry.max_attempts"});
  CHECK(keys_of(rep->needs_restart)
        == std::vector<std::string>{"runtime.order"});
  auto now = rt->config();
  CHECK(now.max_active_keys == 4);
  CHECK(now.window == 50);
  CHECK(now.max_attempts == 3);
  CHECK(now.order == kl::order_mode::global); // kept until restart
  INFO(log.all());
  CHECK(log.count("runtime.max_active_keys = 8 -> 4") == 1);
  CHECK(log.count("runtime.order = \"global\" -> \"none\" takes effect only "
                  "at restart")
        == 1);
  // Events still flow in order after it.
  for (int i = 0; i < 20; ++i)
    REQUIRE(rt->submit("k" + std::to_string(i % 3), i).ok());
  REQUIRE(rt->drain(10s));
  CHECK(rt->stats().ok == 20);
}

TEST_CASE("a reload of a bad file keeps the running config and says why",
          "[reload]") {
  temp_config file{"bad"};
  auto s = two_threads();
  s.max_active_keys = 8;
  holder h;
  log_capture::lines log;
  auto rt = start<int_rt>(s, hold_support::factory(&h), ignore);
  rt->set_log_writer(log.writer());
  file.write("[runtime]\nmax_active_keys = 2\nwindow = -4\n");
  auto rep = rt->reload(file.path.string());
  REQUIRE_FALSE(rep);
  auto why = kl::render(rep.error());
  CHECK(why.find(file.path.string() + ":3: runtime.window = -4: must be >= 1")
        != std::string::npos);
  CHECK(rt->config().max_active_keys == 8);
  CHECK(log.count("reload refused, running config kept") == 1);
  auto missing = rt->reload(file.path.string() + ".missing");
  REQUIRE_FALSE(missing);
  CHECK(missing.error() == kl::make_error(kl::errc::unreadable_config, ""));
  CHECK(rt->config().max_active_keys == 8);
  // Settings built in code are checked too.
  auto zero = rt->config();
  zero.max_active_keys = 0;
  CHECK_FALSE(rt->reload(zero));
  CHECK(rt->config().max_active_keys == 8);
}

TEST_CASE("a reloaded window holds or admits submits at once",
          "[reload][window]") {
  auto s = two_threads();
  s.order = kl::order_mode::none;
  s.overflow = kl::overflow_policy::reject;
  s.window = 10;
  holder h;
  h.hold = {-1};
  auto rt = start<int_rt>(s, hold_support::factory(&h), ignore);
  at_exit drop{[&] { h.release_all(); }};
  int next = 0;
  auto fill = [&] {
    int n = 0;
    while (rt->submit("k" + std::to_string(next % 7), next).ok()) {
      ++next;
      ++n;
    }
    return n;
  };
  CHECK(fill() == 10);
  auto wider = rt->config();
  wider.window = 20;
  REQUIRE(rt->reload(wider));
  CHECK(fill() == 10);
  auto narrow = rt->config();
  narrow.window = 5;
  REQUIRE(rt->reload(narrow));
  CHECK(fill() == 0); // 20 in flight, above the new window
  // Completing them frees credit down to the new window only.
  h.release_all();
  REQUIRE(rt->drain(10s));
  h.holding({-1});
  CHECK(fill() == 5);
  h.release_all();
  REQUIRE(rt->drain(10s));
  CHECK(rt->stats().ok == 25);
}

TEST_CASE("reloaded retry keys apply from the next attempt", "[reload][retry]") {
  auto s = two_threads();
  s.max_attempts = 1;
  s.initial_backoff_ms = 0;
  holder h;
  h.fail_once = {1, 2};
  std::mutex mtx;
  std::map<int, std::tuple<kl::outcome, uint32_t, std::string>> seen;
  auto rt = start<int_rt>(s, hold_support::factory(&h),
                          [&](int_rt::event_type& ev) {
                            std::lock_guard<std::mutex> guard{mtx};
                            seen[ev.payload] = {ev.status, ev.attempts,
                                                ev.error};
                          });
  at_exit drop{[&] { h.release_all(); }};
  REQUIRE(rt->submit("a", 1).ok());
  REQUIRE(rt->drain(10s));
  auto more = rt->config();
  more.max_attempts = 2;
  more.attempt_timeout_ms = 50;
  REQUIRE(rt->reload(more));
  REQUIRE(rt->submit("a", 2).ok());
  h.holding({3}); // never completed: the new timeout ends it
  REQUIRE(rt->submit("b", 3).ok());
  REQUIRE(rt->drain(10s));
  std::lock_guard<std::mutex> guard{mtx};
  using kl::outcome;
  CHECK(seen[1] == std::make_tuple(outcome::failed, 1u, "db down"));
  CHECK(seen[2] == std::make_tuple(outcome::ok, 2u, ""));
  CHECK(seen[3]
        == std::make_tuple(outcome::failed, 2u,
                           "attempt timed out after 50 ms"));
}

TEST_CASE("a lowered cap starts no key above it and a raised one lets more "
          "run",
          "[reload][cap]") {
  auto s = two_threads();
  s.max_active_keys = 6;
  s.lane_linger_ms = 0;
  holder h;
  h.hold = {-1};
  auto rt = start<int_rt>(s, hold_support::factory(&h), ignore);
  for (int i = 0; i < 12; ++i)
    REQUIRE(rt->submit("k" + std::to_string(i), i).ok());
  at_exit drop{[&] { h.release_all(); }};
  REQUIRE(h.wait_held(6));
  REQUIRE(eventually([&] { return rt->stats().waiting_keys == 6; }));
  auto low = rt->config();
  low.max_active_keys = 2;
  REQUIRE(rt->reload(low));
  // The six running finish; then at most two keys at a time: with every
  // started key held, 2 running and 4 waiting means no third one started.
  h.release_held();
  REQUIRE(h.wait_held(2));
  bool two = eventually([&] { return rt->stats().active_lanes == 2; });
  int live = 0;
  {
    std::lock_guard<std::mutex> guard{h.mtx};
    live = h.live;
  }
  INFO("active " << rt->stats().active_lanes << " waiting "
                 << rt->stats().waiting_keys << " live " << live);
  REQUIRE(two);
  CHECK(rt->stats().waiting_keys == 4);
  auto high = rt->config();
  high.max_active_keys = 5;
  REQUIRE(rt->reload(high));
  REQUIRE(h.wait_held(5));
  CHECK(rt->stats().waiting_keys == 1);
  h.release_all();
  REQUIRE(rt->drain(10s));
  CHECK(rt->stats().ok == 12);
  CHECK(rt->stats().peak_active_lanes == 6);
}
