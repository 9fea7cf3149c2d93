// SPDX-License-Identifier: Apache-2.0
// The owner's stop() in the middle of a flow, with events queued, running,
// completed and on their way between the actors: every accepted event is
// delivered or listed in the report, once. Random order, output thread,
// keys and moment, with a printed seed.

#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <random>
#include <set>
#include <thread>
#include <vector>

#include "keylane/runtime.hpp"
#include "property_support.hpp"
#include "stop_accounting.hpp"
#include "watchdog.hpp"

namespace kl = keylane;
using namespace std::chrono_literals;
using rt_type = kl::runtime<uint64_t, uint64_t>;

namespace {

struct busy : kl::handler<uint64_t, uint64_t> {
  explicit busy(uint32_t spin) : spin_(spin) {}

  void on_event(uint64_t& v, kl::completion<uint64_t> done) override {
    if (v % 7 == 3) { // some complete later, from a timer on the lane
      run_later(50us, [v, d = std::move(done)]() mutable { d.ok(v); });
      return;
    }
    volatile uint64_t x = v;
    for (uint32_t i = 0; i < spin_; ++i)
      x = x * 31 + i;
    done.ok(v);
  }

  uint32_t spin_;
};

void run_once(uint64_t seed) {
  std::mt19937_64 rng{seed};
  const kl::order_mode orders[] = {kl::order_mode::none,
                                   kl::order_mode::per_key,
                                   kl::order_mode::global};
  const kl::output_thread outs[] = {kl::output_thread::automatic,
                                    kl::output_thread::consumer,
                                    kl::output_thread::sink};
  kl::settings s;
  s.max_attempts = 1; // the default before 0.2.0
  s.threads = 2;
  s.order = orders[rng() % 3];
  s.output_thread = outs[rng() % 3];
  s.max_active_keys = 1 + rng() % 64;
  s.lane_linger_ms = rng() % 3;
  const uint64_t keys = 1 + rng() % 200, events = 4000;
  const uint64_t stop_after = rng() % events; // deliveries before stop()
  const uint32_t spin = static_cast<uint32_t>(rng() % 2000);
  INFO("seed " << seed << " (rerun with KEYLANE_SEED=" << seed << "): order "
               << kl::to_string(s.order) << ", output_thread "
               << kl::to_string(s.output_thread) << ", max_active_keys "
               << s.max_active_keys << ", keys " << keys << ", stop after "
               << stop_after << " deliveries, spin " << spin);
  std::atomic<uint64_t> progress{0};
  keylane::test::watchdog dog{"start", [&] { return progress.load(); }};
  std::mutex mtx;
  std::set<uint64_t> delivered;
  std::atomic<uint64_t> count{0};
  auto rt = rt_type::start(
    s,
    [spin](const kl::handler_params&) { return std::make_unique<busy>(spin); },
    [&](rt_type::event_type& ev) {
      {
        std::lock_guard<std::mutex> guard{mtx};
        delivered.insert(ev.seq);
      }
      ++count;
      ++progress;
    });
  REQUIRE(rt);
  std::set<uint64_t> accepted;
  std::thread producer{[&] {
    for (uint64_t i = 0; i < events; ++i) {
      auto r = (*rt)->submit(kl::key{rng() % keys}, uint64_t{i});
      if (!r)
        break; // stopped
      accepted.insert(r.seq());
      ++progress;
    }
  }};
  dog.stage("deliveries before the stop");
  while (count.load() < stop_after && count.load() < events)
    std::this_thread::sleep_for(50us);
  dog.stage("stop()");
  auto rep = (*rt)->stop();
  ++progress;
  producer.join();
  dog.stage("the runtime's destructor");
  rt->reset();

  keylane::test::check_accounted(rep, accepted, delivered);
}

} // namespace

TEST_CASE("the owner's stop() in the middle of a flow delivers or lists every "
          "accepted event once, whatever the order and output thread",
          "[stop][property]") {
  auto first = keylane::test::test_seed();
  for (uint64_t i = 0; i < 12; ++i)
    run_once(first + i);
}
