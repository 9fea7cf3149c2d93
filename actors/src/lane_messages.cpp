// SPDX-License-Identifier: Apache-2.0
// Messages between keys: a handler's tell, tell_after and ask, and the
// answers to its asks.
#include "keylane/detail/lane.hpp"

#include <string>
#include <utility>

#include <caf/all.hpp>

#include "keylane/detail/messaging.hpp"
#include "keylane/detail/shard.hpp"

namespace keylane::detail {

errc lane::tell(event_ptr ev) {
  if (!parts().msg.reserve())
    return errc::messages_full;
  // Kept in the outbox until the attempt ends, if one runs.
  sent_ = sent_ || in_attempt();
  return messages_.tell(std::move(ev), in_attempt(), parts().msg);
}

errc lane::tell_after(caf::timespan delay, event_ptr ev, uint64_t& id) {
  bool self = ev->k == key_;
  id = parts().msg.add_timer(std::move(ev));
  if (id == 0)
    return errc::timers_full;
  sent_ = sent_ || in_attempt();
  messages_.tell_after(id, delay, self, in_attempt(), parts().msg);
  return errc::none;
}

bool lane::cancel_timer(uint64_t id) {
  event_ptr ev;
  if (!parts().msg.cancel_timer(id, &ev))
    return false;
  // A kept timer of this key's leaves its record with the next write; one
  // of another key's stays in that key's record (docs/messaging.md).
  if (const auto* o = ev ? ev->origin() : nullptr;
      state_.active() && o && o->timer && o->sender == key_) {
    if (state_.forget_timer(o->number))
      host_->state_dirty(id_);
  }
  return true;
}

errc lane::ask(event_ptr ev, ask_route& route, caf::timespan timeout,
               std::unique_ptr<ask_waiter> waiter) {
  if (!parts().msg.reserve())
    return errc::messages_full;
  auto id = parts().msg.next_ask();
  route.shard = caf::actor_cast<caf::actor>(host_);
  route.lane = id_;
  route.ask = id;
  // The answer comes as a message to this shard: not before this returns.
  auto code = parts().msg.send(std::move(ev));
  if (code != errc::none)
    return code;
  auto timer = messages_.add_timer([this, id, timeout] {
    messages_.expire_ask(id, timeout, parts().msg);
  });
  host_->delayed_send(host_, timeout, timer_atom::value, id_, timer);
  messages_.add_ask(id, std::move(waiter), timer);
  return errc::none;
}

void lane::on_answer(uint64_t ask, outcome status, std::string error,
                     result_box_ptr box) {
  auto waiter = messages_.take_answered(ask);
  if (!waiter)
    return; // timed out, or the handler instance is gone
  auto code = errc::none;
  std::string why;
  if (status != outcome::ok || !box) {
    code = errc::ask_failed;
    why = std::string{"the asked event was "} + to_string(status)
          + (error.empty() ? std::string{} : ": " + error);
  }
  unique_function fn{[&] { waiter->answer(code, std::move(why), box.get()); }};
  call_back(fn);
}

} // namespace keylane::detail
