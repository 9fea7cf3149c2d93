// SPDX-License-Identifier: Apache-2.0
// The kill -9 drill of kept timers: keys set timers to themselves from
// their inputs, and the runtime is killed at random moments on one RocksDB
// directory. Afterwards every timer fired into its key's state exactly
// once, in due order, and none is left.

#include <catch2/catch.hpp>

#include <chrono>
#include <map>
#include <random>
#include <thread>

#include <unistd.h>

#include "keylane/detail/state_record.hpp"
#include "keylane/runtime.hpp"
#include "keylane/state_store.hpp"
#include "keylane/stateful_handler.hpp"

#include "child_process.hpp"
#include "temp_dir.hpp"

using test_support::child_process;
using test_support::child_spec;
namespace kl = keylane;
using namespace std::chrono_literals;

namespace {

/// An input (`input` > 0, numbered per key) or a timer it set (`input` 0).
struct wakeup {
  uint64_t input = 0;
  uint64_t timer_of = 0;
  int64_t due_ms = 0;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, wakeup& x) {
  return f(caf::meta::type_name("wakeup"), x.input, x.timer_of, x.due_ms);
}

struct alarms {
  uint64_t set = 0;
  std::vector<uint64_t> fired;
  int64_t last_due = 0;
  uint64_t order_breaks = 0;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, alarms& x) {
  return f(caf::meta::type_name("alarms"), x.set, x.fired, x.last_due,
           x.order_breaks);
}

} // namespace

template <>
struct keylane::state_origin<wakeup> {
  static constexpr bool available = true;
  static bool of(const wakeup& a, std::string& stream, int64_t& position) {
    if (a.input == 0)
      return false;
    stream = "input";
    position = static_cast<int64_t>(a.input);
    return true;
  }
};

namespace {

using alarm_rt = kl::runtime<wakeup, uint64_t>;

constexpr const char* timer_env = "KEYLANE_TIMER_CRASH_CHILD";
constexpr uint64_t timer_keys = 20;
constexpr uint64_t inputs_per_key = 40;

int64_t now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
           std::chrono::system_clock::now().time_since_epoch())
    .count();
}

// Input i of a key sets a timer to the key, 20 to 420 ms ahead.
struct alarm_handler : kl::stateful_handler<wakeup, uint64_t, alarms> {
  void on_event(wakeup& a, kl::completion<uint64_t> done) override {
    if (a.input == 0) {
      state().fired.push_back(a.timer_of);
      // The due time the handler saw is within a millisecond of the one
      // keylane keeps; two timers due that close may fire either way.
      if (a.due_ms + 2 < state().last_due)
        ++state().order_breaks;
      state().last_due = std::max(state().last_due, a.due_ms);
      return done.ok(0);
    }
    auto k = current_key().integer();
    auto delay = std::chrono::milliseconds(
      20 + kl::stable_hash(k * 1000 + a.input) % 400);
    kl::timer_id id{};
    if (tell_after(delay, current_key(),
                   wakeup{0, a.input, now_ms() + delay.count()}, id)
        != kl::errc::none)
      return done.fail("no timer");
    ++state().set;
    done.ok(a.input);
  }
};

} // namespace

// Run by the drill below in a process of its own; nothing otherwise.
TEST_CASE("(the child process of the kept timers kill -9 drill)",
          "[.timer_crash_child]") {
  int last = 0;
  std::string path;
  if (!child_spec(timer_env, last, path))
    return;
  kl::settings s;
  s.max_attempts = 1; // the default before 0.2.0
  s.order = kl::order_mode::none;
  s.state_store = kl::state_backend::rocksdb;
  s.state_path = path;
  s.state_checkpoint_ms = 10;
  s.lane_linger_ms = 5; // keys retire and come back while timers wait
  auto rt = alarm_rt::start(
    s, [](const kl::handler_params&) { return std::make_unique<alarm_handler>(); },
    [](alarm_rt::event_type& e) {
      if (e.status != kl::outcome::ok && e.status != kl::outcome::skipped)
        _exit(4);
    });
  if (!rt)
    _exit(6);
  // Every run sends every input: those applied before are skipped.
  for (uint64_t i = 1; i <= inputs_per_key; ++i) {
    for (uint64_t k = 0; k < timer_keys; ++k)
      if (!(*rt)->submit(kl::key{k}, wakeup{i, 0, 0}))
        _exit(7);
    std::this_thread::sleep_for(5ms); // timers set over 200 ms
  }
  if (last == 0) {
    pause();
    _exit(8);
  }
  std::this_thread::sleep_for(1500ms); // the last due 620 ms from now
  if (!(*rt)->drain(std::chrono::seconds(30)))
    _exit(9);
  (*rt)->stop();
  _exit(0);
}

TEST_CASE("kept timers fire once each, in due order, across retires and kill -9",
          "[messaging][kept][timer][crash]") {
  std::mt19937_64 rng{std::random_device{}()};
  test_support::temp_dir dir;
  auto path = (dir.path / "state").string();
  for (int run = 0; run < 6; ++run) {
    auto child = child_process::test_case("[.timer_crash_child]", timer_env,
                                          "0 " + path, {});
    REQUIRE(child.started());
    // Any moment: setting timers, while they fire, between checkpoints.
    std::this_thread::sleep_for(std::chrono::milliseconds(50 + rng() % 500));
    child.kill_and_reap();
  }
  auto last = child_process::test_case("[.timer_crash_child]", timer_env,
                                       "1 " + path, {});
  REQUIRE(last.started());
  REQUIRE(last.wait_for(60s) == 0);
  auto st = kl::open_rocksdb_state_store(path, true);
  REQUIRE(st);
  for (uint64_t k = 0; k < timer_keys; ++k) {
    INFO("key " << k);
    auto bytes = (*st)->read(kl::key{k});
    REQUIRE(bytes);
    REQUIRE(*bytes);
    auto rec = kl::detail::decode_state_record(**bytes);
    REQUIRE(rec);
    auto a = kl::codec<alarms>::decode(rec->state);
    REQUIRE(a);
    CHECK(a->set == inputs_per_key);
    auto fired = a->fired;
    std::sort(fired.begin(), fired.end());
    std::vector<uint64_t> each(inputs_per_key);
    for (uint64_t i = 0; i < inputs_per_key; ++i)
      each[i] = i + 1;
    CHECK(fired == each); // each once
    CHECK(a->order_breaks == 0);
    CHECK(rec->outbox.empty());
  }
}
