// SPDX-License-Identifier: Apache-2.0
// Part of keylane/testing/kit.hpp, included at its end: keyed state as
// the runtime keeps it: redeliveries, writes, kept messages, retire.
#pragma once

namespace keylane::testing {

template <class Payload, class Result>
bool kit<Payload, Result>::stores() const noexcept {
  return cfg_.state_store != state_backend::none;
}

// As the runtime: messages are kept in the state only with a store,
// `messaging.exactly_once`, and a codec for the payload.
template <class Payload, class Result>
bool kit<Payload, Result>::keeps_messages(const lane& l) const {
  if constexpr (codec<Payload>::available)
    return stores() && cfg_.messaging_exactly_once && l.h
           && l.h->keyed_state() != nullptr;
  else
    return false;
}

// Whether `e` changed the state before (a sender or a source delivered
// it again after a crash): then it ends skipped, unseen by the handler.
template <class Payload, class Result>
bool kit<Payload, Result>::applied_before(lane& l,
                                          keylane::detail::state_slot& s,
                                          event_type& e) {
  if (const auto* o = e.origin();
      o && o->number <= s.meta.received(o->sender)) {
    s.delivered.emplace_back(o->sender, o->number);
    return true;
  }
  l.has_origin = s.origin(e, l.stream, l.position);
  return l.has_origin && l.position <= s.meta.position(l.stream);
}

template <class Payload, class Result>
void kit<Payload, Result>::note_applied(lane& l, keylane::detail::state_slot& s,
                                        outcome status, event_type& e) {
  if (status == outcome::ok)
    ++s.meta.events;
  if (l.has_origin)
    s.meta.advance(l.stream, l.position);
  if (const auto* o = e.origin()) {
    s.meta.receive(o->sender, o->number);
    s.delivered.emplace_back(o->sender, o->number);
  }
  l.has_origin = false;
  l.dirty = true;
}

// A tell of an event that ended well, kept in the sender's state: it
// leaves after the write that holds it.
template <class Payload, class Result>
void kit<Payload, Result>::keep(lane& l, keylane::detail::state_slot& s,
                                keylane::detail::event_ptr m) {
  if constexpr (!codec<Payload>::available) {
    (void)s;
    leave(l.k, std::move(m), message_kind::tell, {}, {});
  } else {
    auto& te = static_cast<event_type&>(*m);
    auto bytes = codec<Payload>::encode(te.payload);
    if (!bytes)
      return leave(l.k, std::move(m), message_kind::tell, {}, {});
    keylane::detail::kept_message km;
    km.to = te.k;
    km.number = ++s.meta.sent;
    km.payload = std::move(*bytes);
    s.meta.outbox.push_back(km);
    sender_of_.emplace(l.k.to_string(), l.k);
    l.unsent.push_back(std::make_unique<kept_event>(
        te.k, std::move(te.payload),
        keylane::detail::message_origin{l.k, km.number, false}));
  }
}

template <class Payload, class Result>
void kit<Payload, Result>::send_kept(const key& from,
                                     std::unique_ptr<event_type> e) {
  record(from, *e, ++next_msg_, message_kind::tell, {}, {});
  if (!stubbed(e->k))
    enqueue(keylane::detail::event_ptr{e.release()});
}

// The runtime's write policy, on the test's clock: every
// `state.checkpoint_ms` for every key with changes, after every event
// with `sync = "every_event"`, and every `checkpoint_events` events.
template <class Payload, class Result>
void kit<Payload, Result>::state_written_after_event(lane& l) {
  if (!stores())
    return;
  ++l.since_write;
  if (cfg_.state_sync_mode == state_sync::every_event
      || (cfg_.state_checkpoint_events != 0
          && l.since_write >= cfg_.state_checkpoint_events)) {
    write_state(l);
    return;
  }
  if (checkpoint_timer_ == 0 && cfg_.state_checkpoint_ms != 0)
    checkpoint_timer_ = core_.set_timer(
        std::chrono::milliseconds(cfg_.state_checkpoint_ms), [this] {
          checkpoint_timer_ = 0;
          for (auto& [k, x] : lanes_)
            if (x->current == 0)
              write_state(*x);
        });
}

template <class Payload, class Result>
void kit<Payload, Result>::write_state(lane& l) {
  auto sends = take_write(l);
  for (auto& m : sends)
    send_kept(l.k, std::move(m));
}

// Writes `l`'s state if it changed; returns the kept messages that may
// leave now.
template <class Payload, class Result>
auto kit<Payload, Result>::take_write(lane& l)
    -> std::vector<std::unique_ptr<event_type>> {
  auto* s = l.h ? l.h->keyed_state() : nullptr;
  if (!s || !stores() || !l.dirty)
    return {};
  auto bytes = s->encode();
  if (!bytes)
    return {};
  // Messages whose targets' writes hold them are forgotten here, as the
  // runtime's sender forgets them at its next write.
  auto& done = confirmed_[l.k.to_string()];
  auto& out = s->meta.outbox;
  out.erase(std::remove_if(out.begin(), out.end(),
                           [&](const keylane::detail::kept_message& m) {
                             return done.count(m.number) != 0;
                           }),
            out.end());
  auto rec = s->meta;
  rec.state = std::move(*bytes);
  store_[l.k.to_string()].push_back(std::move(rec));
  for (auto& [sender, number] : s->delivered)
    confirmed_[sender.to_string()].insert(number);
  s->delivered.clear();
  l.dirty = false;
  l.since_write = 0;
  auto sends = std::move(l.unsent);
  l.unsent.clear();
  return sends;
}

template <class Payload, class Result>
void kit<Payload, Result>::retire_lane(lane& l) {
  std::vector<std::unique_ptr<event_type>> sends;
  if (l.h) {
    try {
      l.h->on_retire(l.k);
    } catch (...) {
      // As in the runtime: a throwing on_retire still retires the lane.
    }
    sends = take_write(l);
  }
  for (auto t : l.timers)
    core_.cancel_timer(t);
  auto k = l.k;
  auto name = k.to_string();
  lanes_.erase(name);
  for (auto i = order_.begin(); i != order_.end(); ++i)
    if (*i == name) {
      order_.erase(i);
      break;
    }
  // After the lane is gone: a message to its own key starts a new one.
  for (auto& m : sends)
    send_kept(k, std::move(m));
}

// A dry, unheld lane retires `lane_linger_ms` after it ran dry.
template <class Payload, class Result>
void kit<Payload, Result>::note_dry(lane& l) {
  if (!dry(l) || l.held || !l.h || l.dry_since >= duration::zero())
    return;
  l.dry_since = core_.now();
  auto me = l.id;
  auto since = l.dry_since;
  l.linger_timer = core_.set_timer(
      std::chrono::milliseconds(cfg_.lane_linger_ms), [this, me, since] {
        auto* x = lane_by_id(me);
        if (x && dry(*x) && !x->held && x->dry_since == since)
          retire_lane(*x);
      });
}

} // namespace keylane::testing
