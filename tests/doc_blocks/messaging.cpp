// SPDX-License-Identifier: Apache-2.0
#include <chrono>
#include <string>

#include <keylane/errc.hpp>
#include <keylane/handler.hpp>
#include <keylane/handler_registry.hpp>

// What docs/messaging.md's calls assume: a payload with a credit, a tick
// and a quote, and the on_event they are made in.
namespace messaging_doc {

struct msg {
  std::string kind;
  long amount = 0;
  static msg credit(long amount) { return {"credit", amount}; }
  static msg tick() { return {"tick", 0}; }
  static msg quote() { return {"quote", 0}; }
};

struct caller : keylane::handler<msg, double> {
  keylane::timer_id id = 0;
  void on_event(msg&, keylane::completion<double> done) override {
// doc:begin docs/messaging.md
// inside on_event of a handler<msg, double> (a message carries the
// runtime's own payload type, msg here)
keylane::errc e = tell("acct-9", msg::credit(30));          // after this event
e = tell_after(std::chrono::seconds(5), "room-3", msg::tick(), id); // a timer
cancel_timer(id);                                            // true: never fires
auto d = std::move(done).share(); // one copy answers, one tells a refusal
e = ask("fx-EURUSD", msg::quote(), std::chrono::milliseconds(200),
        [d](caf::expected<double> r) {
          if (r) d.ok(*r * 2); else d.fail(keylane::render(r.error()));
        });
if (e != keylane::errc::none) // not sent (messages_full, stopped): say why
  d.fail(keylane::to_string(e));
hold();    // keep this key's lane while it is dry
release(); // let it retire again after its linger
set_turn_budget(1024); // this key's events per turn (on_activate)
// doc:end
  }
};

void add_handlers(keylane::handler_registry& reg) { reg.add<caller>("caller"); }

} // namespace messaging_doc
