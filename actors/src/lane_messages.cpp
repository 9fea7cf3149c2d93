// SPDX-License-Identifier: Apache-2.0
// Messages between keys: a handler's tell, tell_after and ask, and the
// answers to its asks.
#include "keylane/detail/lane.hpp"

#include <algorithm>
#include <chrono>
#include <exception>
#include <utility>

#include <caf/all.hpp>

#include "keylane/detail/logger.hpp"
#include "keylane/detail/messaging.hpp"
#include "keylane/detail/payload_ops.hpp"
#include "keylane/detail/shard.hpp"
#include "keylane/detail/state_record.hpp"

namespace keylane::detail {

errc lane::tell(event_ptr ev) {
  if (!parts_.msg.reserve())
    return errc::messages_full;
  if (in_attempt()) {
    outbox_.push_back(outgoing{std::move(ev), 0, caf::timespan{0}, false});
    return errc::none;
  }
  return parts_.msg.send(std::move(ev));
}

errc lane::tell_after(caf::timespan delay, event_ptr ev, uint64_t& id) {
  bool self = ev->k == key_;
  id = parts_.msg.add_timer(std::move(ev));
  if (id == 0)
    return errc::timers_full;
  if (in_attempt())
    outbox_.push_back(outgoing{nullptr, id, delay, self});
  else
    parts_.msg.arm_timer(id, delay);
  return errc::none;
}

bool lane::cancel_timer(uint64_t id) {
  event_ptr ev;
  if (!parts_.msg.cancel_timer(id, &ev))
    return false;
  // A kept timer of this key's leaves its record with the next write; one
  // of another key's stays in that key's record (docs/messaging.md).
  if (const auto* o = ev ? ev->origin() : nullptr;
      state_ && o && o->timer && o->sender == key_) {
    auto& out = state_->meta.outbox;
    out.erase(std::remove_if(out.begin(), out.end(),
                             [&](const kept_message& m) {
                               return m.number == o->number;
                             }),
              out.end());
    mark_state_dirty();
  }
  return true;
}

errc lane::ask(event_ptr ev, ask_route& route, caf::timespan timeout,
               std::unique_ptr<ask_waiter> waiter) {
  if (!parts_.msg.reserve())
    return errc::messages_full;
  auto id = parts_.msg.next_ask();
  route.shard = caf::actor_cast<caf::actor>(host_);
  route.lane = id_;
  route.ask = id;
  // The answer comes as a message to this shard: not before this returns.
  auto code = parts_.msg.send(std::move(ev));
  if (code != errc::none)
    return code;
  auto timer = ++next_timer_;
  timers_.emplace(timer,
                  [this, id, timeout] { expire_ask(id, timeout); });
  host_->delayed_send(host_, timeout, timer_atom::value, id_, timer);
  asks_.emplace(id, pending_ask{std::move(waiter), timer});
  return errc::none;
}

void lane::expire_ask(uint64_t ask, caf::timespan timeout) {
  auto i = asks_.find(ask);
  if (i == asks_.end())
    return;
  auto waiter = std::move(i->second.waiter);
  asks_.erase(i);
  parts_.msg.ask_timed_out();
  auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(timeout);
  // Runs inside the timer's handler call (on_timer).
  waiter->answer(errc::ask_timeout,
                 "no answer within " + std::to_string(ms.count()) + " ms",
                 nullptr);
}

void lane::on_answer(uint64_t ask, outcome status, std::string error,
                     result_box_ptr box) {
  auto i = asks_.find(ask);
  if (i == asks_.end())
    return; // timed out, or the handler instance is gone
  auto waiter = std::move(i->second.waiter);
  timers_.erase(i->second.timer);
  asks_.erase(i);
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

void lane::send_outbox() {
  for (auto& m : outbox_) {
    if (m.ev)
      (void) parts_.msg.send(std::move(m.ev)); // stopped: dropped, counted
    else
      parts_.msg.arm_timer(m.timer, m.delay);
  }
  outbox_.clear();
}

void lane::keep_outbox() {
  auto& meta = state_->meta;
  size_t left = 0; // what stays for `send_outbox`, at the front
  auto keep_unkept = [this](outgoing& m, size_t& at) {
    if (&outbox_[at] != &m)
      outbox_[at] = std::move(m);
    ++at;
  };
  for (auto& m : outbox_) {
    if (!m.ev) {
      if (m.self)
        keep_timer(m);
      keep_unkept(m, left); // armed when the event ends, kept or not
      continue;
    }
    auto bytes = parts_.ops.encode_message(*m.ev);
    if (!bytes) {
      // Sent as without `exactly_once`: late is better than never.
      parts_.log.write(log_level::error,
                       "messaging: a message of key " + key_.to_string()
                         + " cannot be encoded, so it is sent unkept: "
                         + render(bytes.error()));
      keep_unkept(m, left);
      continue;
    }
    auto number = ++meta.sent;
    meta.outbox.push_back(
      kept_message{m.ev->k, number, 0, std::move(*bytes)});
    state_->unsent.push_back(
      parts_.ops.keep_message(*m.ev, message_origin{key_, number}));
  }
  outbox_.resize(left);
}

// A timer to itself lives in the key's record until it fires into its
// state: it needs no wait for a write, since its effect and its existence
// are written together. It stays armed in the runtime's table as before.
void lane::keep_timer(const outgoing& m) {
  auto ev = parts_.msg.take_timer(m.timer);
  if (!ev)
    return; // cancelled within its own attempt
  auto bytes = parts_.ops.encode_message(*ev);
  if (!bytes) {
    parts_.log.write(log_level::error,
                     "messaging: a timer of key " + key_.to_string()
                       + " cannot be encoded, so it is not kept: "
                       + render(bytes.error()));
    (void) parts_.msg.put_timer(m.timer, std::move(ev));
    return;
  }
  auto& meta = state_->meta;
  auto number = ++meta.sent;
  auto now = std::chrono::duration_cast<std::chrono::milliseconds>(
               std::chrono::system_clock::now().time_since_epoch())
               .count();
  auto due = now
             + std::chrono::duration_cast<std::chrono::milliseconds>(m.delay)
                 .count();
  meta.outbox.push_back(
    kept_message{key_, number, std::max<int64_t>(due, 1), std::move(*bytes)});
  (void) parts_.msg.put_timer(
    m.timer, parts_.ops.keep_message(*ev, message_origin{key_, number, true}));
}

void lane::drop_outbox() {
  for (auto& m : outbox_) {
    if (m.ev)
      parts_.msg.release();
    else
      parts_.msg.drop_timer(m.timer);
  }
  outbox_.clear();
}

} // namespace keylane::detail
