// SPDX-License-Identifier: Apache-2.0
// Part of keylane/testing/kit.hpp, included at its end: the kit's lanes
// and their attempts: start, activation, completion, retry and parking.
#pragma once

namespace keylane::testing {

template <class Payload, class Result>
auto kit<Payload, Result>::find(const handler_registry& reg,
                                const std::string& name) -> handler_factory {
  auto f = reg.find<Payload, Result>(name);
  if (!f)
    throw std::invalid_argument("keylane::testing::kit: no handler '" + name
                                + "' of these types in the registry");
  return std::move(*f);
}

template <class Payload, class Result>
auto kit<Payload, Result>::ev(uint64_t id) const -> event_type& {
  auto i = events_.find(id);
  if (i == events_.end())
    throw std::out_of_range("keylane::testing::kit: no event "
                            + std::to_string(id));
  return static_cast<event_type&>(*i->second);
}

template <class Payload, class Result>
auto kit<Payload, Result>::find_lane(const key& k) const -> lane* {
  auto i = lanes_.find(k.to_string());
  return i == lanes_.end() ? nullptr : i->second.get();
}

template <class Payload, class Result>
auto kit<Payload, Result>::lane_by_id(uint64_t id) const -> lane* {
  for (auto& [k, l] : lanes_)
    if (l->id == id)
      return l.get();
  return nullptr;
}

template <class Payload, class Result>
auto kit<Payload, Result>::lane_for(const key& k) -> lane& {
  auto name = k.to_string();
  auto& l = lanes_[name];
  if (!l) {
    l = std::make_unique<lane>();
    l->owner = this;
    l->k = k;
    // Never a runtime lane's id: a completion's check "is my lane in
    // its call on this thread" is false for it, so every completion
    // reaches the kit's actor as a message (see kit_core).
    l->id = (uint64_t{1} << 63) | ++next_lane_;
    order_.push_back(name);
  }
  return *l;
}

template <class Payload, class Result>
uint64_t kit<Payload, Result>::enqueue(keylane::detail::event_ptr e) {
  auto id = ++next_event_;
  e->seq = id;
  auto k = e->k;
  events_.emplace(id, std::move(e));
  auto name = k.to_string();
  if (auto p = parked_.find(name); p != parked_.end()) {
    park_one(id, "an earlier event of its key is parked");
    p->second.push_back(id);
    return id;
  }
  lane_for(k).queue.push_back(id);
  return id;
}

template <class Payload, class Result>
bool kit<Payload, Result>::dry(const lane& l) const {
  return l.current == 0 && l.queue.empty() && !l.awaiting;
}

// Starts the lane's next event if it can; true if it did.
template <class Payload, class Result>
bool kit<Payload, Result>::start_next(lane& l) {
  if (!dry(l) && l.current == 0 && !l.queue.empty()) {
    l.current = l.queue.front();
    l.queue.pop_front();
    l.dry_since = duration{-1};
    attempt(l);
    return true;
  }
  return false;
}

template <class Payload, class Result>
bool kit<Payload, Result>::activate(lane& l, std::string& why) {
  try {
    l.h = make_(cfg_.params);
    if (!l.h) {
      why = "the handler factory returned no handler";
      return false;
    }
    keylane::detail::handler_host::bind(*l.h, &l, core_.self(), &l.k);
    if (auto* s = l.h->keyed_state()) {
      auto& v = store_[l.k.to_string()];
      const keylane::detail::state_record* rec
          = v.empty() || !stores() ? nullptr : &v.back();
      if (auto err = s->load(rec)) {
        why = "its state could not be loaded";
        l.h.reset();
        return false;
      }
      s->meta = rec ? *rec : keylane::detail::state_record{};
      s->meta.state.clear();
    }
    l.h->on_activate(l.k);
    return true;
  } catch (const std::exception& e) {
    why = std::string{"activation threw: "} + e.what();
  } catch (...) {
    why = "activation threw";
  }
  l.h.reset();
  return false;
}

template <class Payload, class Result>
void kit<Payload, Result>::attempt(lane& l) {
  auto& e = ev(l.current);
  ++e.attempts;
  l.awaiting = true;
  l.backing_off = false;
  auto token = ++l.token;
  if (!l.h) {
    std::string why;
    if (!activate(l, why)) {
      settle(l, outcome::failed, std::move(why), false);
      return;
    }
  }
  if (auto* s = l.h->keyed_state()) {
    if (applied_before(l, *s, e)) {
      ++l.token;
      finish(l, outcome::skipped, {});
      return;
    }
    if (cfg_.state_rollback)
      (void)s->keep();
  }
  std::chrono::steady_clock::time_point deadline{};
  if (cfg_.attempt_timeout_ms > 0) {
    auto limit = std::chrono::milliseconds(cfg_.attempt_timeout_ms);
    deadline = clock_now() + limit; // on the test's clock
    auto me = l.id;
    l.timeout_timer = core_.set_timer(limit, [this, me, token] {
      auto* x = lane_by_id(me);
      if (!x || !x->awaiting || x->backing_off || x->token != token)
        return;
      ++x->token; // its completion, should it come, is stale
      settle(*x, outcome::failed,
             "attempt timed out after "
                 + std::to_string(cfg_.attempt_timeout_ms) + " ms",
             false);
    });
  }
  keylane::detail::completion_core core{
      reinterpret_cast<keylane::detail::lane*>(&l),
      l.id,
      core_.host(),
      token,
      l.h->result_slot(e),
      deadline};
  try {
    l.h->invoke(e, std::move(core));
  } catch (const std::exception& x) {
    if (l.token == token && l.awaiting && !l.backing_off) {
      ++l.token;
      settle(l, outcome::failed, std::string{"handler threw: "} + x.what(),
             false);
    }
  }
}

template <class Payload, class Result>
void kit<Payload, Result>::on_complete(uint64_t lane_id, uint64_t token,
                                       outcome status, bool permanent,
                                       std::string error,
                                       keylane::detail::result_box_ptr box) {
  auto* l = lane_by_id(lane_id);
  if (!l || !l->awaiting || l->backing_off || l->token != token
      || l->current == 0)
    return; // late, duplicate, or of an earlier attempt
  if (box)
    box->apply(l->h->result_slot(ev(l->current)));
  settle(*l, status, std::move(error), permanent);
}

template <class Payload, class Result>
void kit<Payload, Result>::settle(lane& l, outcome status, std::string error,
                                  bool permanent) {
  if (l.timeout_timer)
    core_.cancel_timer(std::exchange(l.timeout_timer, 0));
  auto* s = l.h ? l.h->keyed_state() : nullptr;
  if (status != outcome::failed) {
    if (s)
      note_applied(l, *s, status, ev(l.current));
    auto out = std::move(l.outbox);
    l.outbox.clear();
    finish(l, status, {});
    for (auto& m : out) {
      if (m.timer) {
        unstage(m.id);
        arm(l.k, std::move(m.ev), m.delay, m.id);
      } else if (keeps_messages(l)) {
        keep(l, *s, std::move(m.ev));
      } else {
        leave(l.k, std::move(m.ev), message_kind::tell, {}, {});
      }
    }
    if (s)
      state_written_after_event(l);
    return;
  }
  for (auto& m : l.outbox)
    if (m.timer)
      unstage(m.id);
  l.outbox.clear();
  if (s && cfg_.state_rollback)
    s->restore();
  auto& e = ev(l.current);
  if (permanent || e.attempts >= cfg_.max_attempts) {
    if (cfg_.park == park_mode::none) {
      finish(l, outcome::failed, std::move(error));
      return;
    }
    auto name = l.k.to_string();
    e.error = std::move(error);
    auto& list = parked_[name];
    auto id = std::exchange(l.current, 0);
    l.awaiting = false;
    ++l.token;
    e.status = outcome::parked;
    ended_.push_back(id);
    list.push_back(id);
    end_ask(id);
    while (!l.queue.empty()) {
      auto next = l.queue.front();
      l.queue.pop_front();
      park_one(next, "an earlier event of its key is parked");
      list.push_back(next);
    }
    return;
  }
  // Retry at the head after a backoff; the key's later events wait.
  e.error = std::move(error);
  l.backing_off = true;
  auto token = ++l.token;
  auto delay = keylane::detail::backoff_delay(cfg_, e.attempts, rng_());
  auto me = l.id;
  core_.set_timer(delay, [this, me, token] {
    auto* x = lane_by_id(me);
    if (!x || !x->backing_off || x->token != token)
      return;
    attempt(*x);
  });
}

template <class Payload, class Result>
void kit<Payload, Result>::park_one(uint64_t id, std::string why) {
  auto& e = ev(id);
  e.status = outcome::parked;
  e.error = std::move(why);
  ended_.push_back(id);
  end_ask(id);
}

template <class Payload, class Result>
void kit<Payload, Result>::finish(lane& l, outcome status, std::string error) {
  auto id = std::exchange(l.current, 0);
  l.awaiting = false;
  l.backing_off = false;
  auto& e = ev(id);
  e.status = status;
  if (status == outcome::failed)
    e.error = std::move(error);
  else
    e.error.clear();
  ended_.push_back(id);
  end_ask(id);
}

} // namespace keylane::testing
