// SPDX-License-Identifier: Apache-2.0
// A handler the kit's tests drive by payload: each command names one thing
// a handler can do with its completion, its state, its messages or its
// timers, so one test reads as the script of what the handler did.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <caf/actor.hpp>
#include <caf/event_based_actor.hpp>
#include <caf/meta/type_name.hpp>

#include <keylane/completion.hpp>
#include <keylane/stateful_handler.hpp>

namespace kit_test {

/// One command for `script_handler`.
struct cmd {
  cmd(std::string o = {}, int64_t v = 0, std::string t = {})
    : op(std::move(o)), value(v), to(std::move(t)) {}
  std::string op;
  int64_t value = 0;
  std::string to; // the key a message goes to
};

// A codec, so that a stateful sender keeps its tells in its state
// (`messaging.exactly_once`) when a store is configured.
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, cmd& x) {
  return f(caf::meta::type_name("kit_test::cmd"), x.op, x.value, x.to);
}

/// Runs `cmd`s; its keyed state is a running total.
class script_handler final
  : public keylane::stateful_handler<cmd, int64_t, int64_t> {
public:
  void on_activate(const keylane::key&) override { ++activations; }

  void on_event(cmd& c, keylane::completion<int64_t> done) override {
    using std::chrono::milliseconds;
    ++calls;
    if (c.op == "ok") {
      done.ok(c.value);
    } else if (c.op == "skip") {
      done.skip();
    } else if (c.op == "fail") {
      done.fail("told to fail");
    } else if (c.op == "fail_permanently") {
      done.fail_permanently("told to fail for good");
    } else if (c.op == "keep") { // finished later by "finish"
      kept.emplace(std::move(done));
    } else if (c.op == "finish") {
      kept->ok(c.value);
      kept.reset();
      done.ok(0);
    } else if (c.op == "hang") { // never finished while it lives
      hung.emplace(std::move(done));
    } else if (c.op == "later") {
      run_later(milliseconds(c.value),
                [this, v = c.value, d = std::move(done)]() mutable {
                  fired.push_back(v);
                  d.ok(v);
                });
    } else if (c.op == "fail_until") { // fails the first `value - 1` tries
      if (++tries < c.value)
        done.fail("try " + std::to_string(tries));
      else
        done.ok(tries);
    } else if (c.op == "add") {
      state() += c.value;
      done.ok(state());
    } else if (c.op == "add_then_fail") {
      state() += c.value;
      (void) tell(c.to, cmd{"add", c.value, {}});
      done.fail("added, then failed");
    } else if (c.op == "tell") {
      (void) tell(c.to, cmd{"add", c.value, {}});
      done.ok(0);
    } else if (c.op == "ask") {
      auto shared = std::move(done).share();
      (void) ask(c.to, cmd{"add", c.value, {}}, milliseconds(100),
                 [shared](caf::expected<int64_t> x) {
                   if (x)
                     shared.ok(*x);
                   else
                     shared.fail(to_string(x.error()));
                 });
    } else if (c.op == "timer") {
      (void) tell_after(milliseconds(c.value), c.to, cmd{"add", 1, {}},
                        last_timer);
      done.ok(0);
    } else if (c.op == "cancel") {
      done.ok(cancel_timer(last_timer) ? 1 : 0);
    } else if (c.op == "request") { // to the actor `db`, within 100 ms
      auto shared = std::move(done).share();
      self()
        ->request(db, milliseconds(100), c.value)
        .then([shared](int64_t x) { shared.ok(x); },
              [shared](caf::error& e) { shared.fail(to_string(e)); });
    } else if (c.op == "hold") {
      hold();
      done.ok(0);
    } else if (c.op == "release") {
      release();
      done.ok(0);
    } else if (c.op == "budget") {
      set_turn_budget(static_cast<size_t>(c.value));
      done.ok(0);
    } else {
      done.fail_permanently("unknown op " + c.op);
    }
  }

  int activations = 0;
  int calls = 0;
  int64_t tries = 0;
  std::vector<int64_t> fired;
  std::optional<keylane::completion<int64_t>> kept;
  std::optional<keylane::completion<int64_t>> hung;
  keylane::timer_id last_timer = 0;
  caf::actor db; // for "request"
};

} // namespace kit_test
