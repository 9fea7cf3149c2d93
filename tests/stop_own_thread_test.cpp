// SPDX-License-Identifier: Apache-2.0
// stop() and drain() called on one of the runtime's own threads — the
// output callback, a handler, a run_later timer — where waiting for the
// runtime would wait for the very thread that waits. drain() is refused
// at once; stop() begins the stop and returns; the owner's drain() then
// returns and its stop() reports every accepted event not delivered.

#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "keylane/runtime.hpp"
#include "log_capture.hpp"
#include "stop_accounting.hpp"
#include "watchdog.hpp"

namespace kl = keylane;
using namespace std::chrono_literals;
using rt_type = kl::runtime<uint64_t, uint64_t>;

namespace {

enum class from { callback, handler, timer };

const char* name(from f) {
  switch (f) {
    case from::callback:
      return "the output callback";
    case from::handler:
      return "a handler";
    default:
      return "a run_later timer";
  }
}

constexpr uint64_t events = 1000;
constexpr uint64_t trigger = 127; // the event (or output) that calls stop()

// What the call on the runtime's thread saw.
struct inside {
  std::atomic<rt_type*> rt{nullptr};
  std::atomic<bool> called{false};
  std::atomic<bool> returned{false};
  std::atomic<bool> drained{true};
  std::atomic<bool> complete{true};

  void call() {
    if (called.exchange(true))
      return;
    auto* r = rt.load();
    drained = r->drain(std::chrono::hours(1));
    auto rep = r->stop();
    complete = rep.complete;
    returned = true;
  }
};

struct stopping : kl::handler<uint64_t, uint64_t> {
  stopping(from f, inside* in) : from_(f), in_(in) {}

  void on_event(uint64_t& v, kl::completion<uint64_t> done) override {
    if (v == trigger && from_ == from::handler) {
      in_->call();
    } else if (v == trigger && from_ == from::timer) {
      run_later(1ms, [in = in_, v, d = std::move(done)]() mutable {
        in->call();
        d.ok(v);
      });
      return;
    }
    done.ok(v);
  }

  from from_;
  inside* in_;
};

// Submits the test's events; returns the sequence numbers accepted. Each
// submit is accepted, or refused because the stop has begun.
std::set<uint64_t> submit_all(rt_type& rt, std::atomic<uint64_t>& progress) {
  std::set<uint64_t> accepted;
  uint64_t refused = 0;
  for (uint64_t i = 0; i < events; ++i) {
    auto r = rt.submit(kl::key{i % 50}, uint64_t{i});
    if (r)
      accepted.insert(r.seq());
    else if (r.code() == kl::errc::stopped)
      ++refused;
    else
      FAIL("submit refused with " << kl::to_string(r.code()));
    ++progress;
  }
  CHECK(accepted.size() + refused == events);
  return accepted;
}

// What every case watches: the stop as the runtime's thread saw it, the
// progress the watchdog reads, and the log lines.
struct case_state {
  inside in;
  std::atomic<uint64_t> progress{0};
  keylane::test::watchdog dog{"start", [this] { return progress.load(); }};
  log_capture::lines logs;

  kl::settings settings(kl::order_mode order) const {
    kl::settings s;
    s.max_attempts = 1; // the default before 0.2.0
    s.threads = 2;
    s.order = order;
    return s;
  }

  // The stop began on the runtime's own thread: `stop()` returned there at
  // once, refused to drain, and said why in the log.
  void check_began_on_own_thread() {
    REQUIRE(in.called);
    CHECK(in.returned);
    CHECK_FALSE(in.drained); // refused: it would wait for its own thread
    CHECK_FALSE(in.complete); // begun, not finished, on that thread
    CHECK_FALSE(
      logs.wait_for("on one of the runtime's own threads", 2s).empty());
  }
};

void run_case(from where, kl::order_mode order, kl::output_thread out) {
  INFO("stop() from " << name(where) << ", order " << kl::to_string(order)
                      << ", output_thread " << kl::to_string(out));
  case_state c;
  auto s = c.settings(order);
  s.output_thread = out;
  std::mutex mtx;
  std::set<uint64_t> delivered; // sequence numbers
  auto rt = rt_type::start(
    s,
    [&](const kl::handler_params&) {
      return std::make_unique<stopping>(where, &c.in);
    },
    [&](rt_type::event_type& ev) {
      size_t n;
      {
        std::lock_guard<std::mutex> guard{mtx};
        delivered.insert(ev.seq);
        n = delivered.size();
      }
      ++c.progress;
      if (where == from::callback && n == trigger)
        c.in.call();
    });
  REQUIRE(rt);
  (*rt)->set_log_writer(c.logs.writer());
  c.in.rt = rt->get();
  c.dog.stage("submits");
  auto accepted = submit_all(**rt, c.progress);
  c.dog.stage("the owner's drain()");
  bool owner_drained = (*rt)->drain(); // the default timeout: a year
  ++c.progress;
  c.dog.stage("the owner's stop()");
  auto rep = (*rt)->stop();
  ++c.progress;
  auto st = (*rt)->stats();
  c.dog.stage("the runtime's destructor");
  rt->reset();
  ++c.progress;

  c.check_began_on_own_thread();
  CHECK(st.accepted == rep.accepted);
  // A drain that returned true saw every accepted event delivered; once
  // the stop began it returns, false, though events still on their way may
  // be delivered before the owner's stop ends them.
  if (owner_drained)
    CHECK(rep.delivered == rep.accepted);
  keylane::test::check_accounted(rep, accepted, delivered);
}

// Pull mode: the owner waits in pull() with a long timeout while a handler
// (or its timer) begins the stop. The pull takes what is queued, then
// returns false at once rather than waiting out its timeout for outputs
// that will never come.
void run_pull_case(from where, kl::order_mode order) {
  INFO("pull mode, stop() from " << name(where) << ", order "
                                  << kl::to_string(order));
  case_state c;
  auto s = c.settings(order);
  auto rt = rt_type::start(s, [&](const kl::handler_params&) {
    return std::make_unique<stopping>(where, &c.in);
  });
  REQUIRE(rt);
  (*rt)->set_log_writer(c.logs.writer());
  c.in.rt = rt->get();
  c.dog.stage("submits");
  auto accepted = submit_all(**rt, c.progress);
  c.dog.stage("the owner's pull() (an hour's timeout)");
  std::set<uint64_t> delivered;
  std::unique_ptr<rt_type::event_type> ev;
  while ((*rt)->pull(ev, std::chrono::hours(1))) {
    delivered.insert(ev->seq);
    ++c.progress;
  }
  ++c.progress;
  c.dog.stage("the owner's stop()");
  auto rep = (*rt)->stop();
  ++c.progress;
  c.dog.stage("the runtime's destructor");
  rt->reset();
  ++c.progress;

  c.check_began_on_own_thread();
  keylane::test::check_accounted(rep, accepted, delivered);
}

} // namespace

TEST_CASE("stop() from the output callback begins the stop, and the owner's "
          "stop() reports every accepted event not delivered",
          "[stop][own_thread]") {
  run_case(from::callback, kl::order_mode::per_key,
           kl::output_thread::automatic);
  run_case(from::callback, kl::order_mode::per_key,
           kl::output_thread::consumer);
  run_case(from::callback, kl::order_mode::per_key, kl::output_thread::sink);
  run_case(from::callback, kl::order_mode::global,
           kl::output_thread::consumer);
  run_case(from::callback, kl::order_mode::none, kl::output_thread::automatic);
}

TEST_CASE("stop() from a handler begins the stop, and the owner's stop() "
          "reports every accepted event not delivered",
          "[stop][own_thread]") {
  run_case(from::handler, kl::order_mode::per_key,
           kl::output_thread::automatic);
  run_case(from::handler, kl::order_mode::global, kl::output_thread::consumer);
}

TEST_CASE("stop() from a run_later timer begins the stop, and the owner's "
          "stop() reports every accepted event not delivered",
          "[stop][own_thread]") {
  run_case(from::timer, kl::order_mode::per_key, kl::output_thread::automatic);
  run_case(from::timer, kl::order_mode::global, kl::output_thread::sink);
}

TEST_CASE("in pull mode, a pull() waiting when a handler begins the stop "
          "takes what is queued and returns false without its timeout",
          "[stop][own_thread][pull]") {
  run_pull_case(from::handler, kl::order_mode::per_key);
  run_pull_case(from::handler, kl::order_mode::global);
  run_pull_case(from::timer, kl::order_mode::none);
}
