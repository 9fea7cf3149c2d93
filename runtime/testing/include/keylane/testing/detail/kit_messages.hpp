// SPDX-License-Identifier: Apache-2.0
// Part of keylane/testing/kit.hpp, included at its end: the messages
// handlers send: recorded, delivered, armed, asked and answered.
#pragma once

namespace keylane::testing {

template <class Payload, class Result>
bool kit<Payload, Result>::stubbed(const key& k) const {
  for (auto& s : stubs_)
    if (s == k)
      return true;
  return false;
}

template <class Payload, class Result>
void kit<Payload, Result>::record(const key& from,
                                  const keylane::detail::event_base& e,
                                  uint64_t id, message_kind kind,
                                  caf::timespan timeout, caf::timespan delay) {
  auto& te = static_cast<const event_type&>(e);
  sent_.push_back(
      sent_message<Payload>{id, from, te.k, te.payload, kind, timeout, delay});
}

// A tell leaves: recorded, and delivered unless its key is a stub.
template <class Payload, class Result>
void kit<Payload, Result>::leave(const key& from, keylane::detail::event_ptr e,
                                 message_kind kind, caf::timespan timeout,
                                 caf::timespan delay) {
  record(from, *e, ++next_msg_, kind, timeout, delay);
  if (!stubbed(e->k))
    enqueue(std::move(e));
}

template <class Payload, class Result>
void kit<Payload, Result>::arm(const key& from, keylane::detail::event_ptr e,
                               caf::timespan delay, uint64_t id) {
  record(from, *e, id, message_kind::timer, {}, delay);
  auto shared = std::make_shared<keylane::detail::event_ptr>(std::move(e));
  armed_[id] = core_.set_timer(delay, [this, id, shared] {
    armed_.erase(id);
    if (!stubbed((*shared)->k))
      enqueue(std::move(*shared));
  });
}

template <class Payload, class Result>
void kit<Payload, Result>::unstage(uint64_t id) {
  for (auto i = staged_timers_.begin(); i != staged_timers_.end(); ++i)
    if (*i == id) {
      staged_timers_.erase(i);
      return;
    }
}

template <class Payload, class Result>
bool kit<Payload, Result>::cancel_message_timer(uint64_t id) {
  if (auto i = armed_.find(id); i != armed_.end()) {
    core_.cancel_timer(i->second);
    armed_.erase(i);
    return true;
  }
  for (auto& [k, l] : lanes_)
    for (auto m = l->outbox.begin(); m != l->outbox.end(); ++m)
      if (m->timer && m->id == id) {
        l->outbox.erase(m);
        unstage(id);
        return true;
      }
  return false;
}

template <class Payload, class Result>
void kit<Payload, Result>::send_ask(
    lane& l, keylane::detail::event_ptr e, caf::timespan timeout,
    std::unique_ptr<keylane::detail::ask_waiter> waiter) {
  auto msg = ++next_msg_;
  record(l.k, *e, msg, message_kind::ask, timeout, {});
  waiting_ask w;
  w.asker = l.id;
  w.waiter = std::move(waiter);
  w.timer = core_.set_timer(timeout, [this, msg, timeout] {
    auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(timeout);
    answer_ask(msg, errc::ask_timeout,
               "ask timed out after " + std::to_string(ms.count()) + " ms",
               nullptr);
  });
  if (!stubbed(e->k))
    w.target = enqueue(std::move(e));
  asks_.emplace(msg, std::move(w));
}

// Event `id` ended: answers the ask that sent it, if one waits.
template <class Payload, class Result>
void kit<Payload, Result>::end_ask(uint64_t id) {
  uint64_t msg = 0;
  for (auto& [m, w] : asks_)
    if (w.target == id) {
      msg = m;
      break;
    }
  if (msg != 0) {
    auto& e = ev(id);
    if (e.status == outcome::ok && e.result)
      answer_ask(msg, errc::none, {},
                 std::make_shared<keylane::detail::typed_result_box<Result>>(
                     *e.result));
    else
      answer_ask(msg, errc::ask_failed,
                 "the asked event ended " + std::string{to_string(e.status)},
                 nullptr);
  }
}

template <class Payload, class Result>
bool kit<Payload, Result>::answer_ask(uint64_t msg, errc code, std::string text,
                                      keylane::detail::result_box_ptr box) {
  auto i = asks_.find(msg);
  if (i == asks_.end())
    return false;
  auto w = std::move(i->second);
  asks_.erase(i);
  if (w.timer)
    core_.cancel_timer(w.timer);
  auto* l = lane_by_id(w.asker);
  if (!l || !l->h)
    return true; // its lane is gone: the answer finds no one
  w.waiter->answer(code, std::move(text), box.get());
  return true;
}

} // namespace keylane::testing
