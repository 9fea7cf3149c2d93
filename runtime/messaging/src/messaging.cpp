// SPDX-License-Identifier: Apache-2.0
#include "keylane/detail/messaging.hpp"

#include <utility>

#include <caf/send.hpp>

#include "keylane/detail/ingress.hpp"
#include "keylane/detail/messages.hpp"

namespace keylane::detail {

bool messaging::reserve() noexcept {
  auto cur = in_flight_.load(std::memory_order_acquire);
  while (cur < max_in_flight_)
    if (in_flight_.compare_exchange_weak(cur, cur + 1,
                                         std::memory_order_acq_rel))
      return true;
  refused_.fetch_add(1, std::memory_order_relaxed);
  return false;
}

errc messaging::send(event_ptr ev) {
  ev->flags |= event_flags::message;
  auto k = ev->k; // the event may be finished before `submit` returns
  auto make = [](void* ctx) -> event_ptr {
    return std::move(*static_cast<event_ptr*>(ctx));
  };
  // An asker holds its slot of the cap until answered: its target must
  // not wait for one, or askers that fill the cap wait on each other.
  bool past_cap = (ev->flags & event_flags::asked) != 0;
  auto res = in_.submit(k, make, &ev, false, true, past_cap);
  if (res.code != errc::none) {
    release();
    return res.code;
  }
  sent_.fetch_add(1, std::memory_order_relaxed);
  return errc::none;
}

void messaging::end_message(event_base& ev) noexcept {
  if ((ev.flags & event_flags::asked) != 0)
    ev.answer();
  if ((ev.flags & event_flags::message) != 0)
    release();
  // A replayed event is a new one: it holds no unit and answers nobody.
  ev.flags = 0;
}

uint64_t messaging::add_timer(event_ptr ev) {
  std::lock_guard<std::mutex> guard{timers_mtx_};
  if (timers_.size() >= max_timers_)
    return 0;
  auto id = next_timer_++;
  timers_.emplace(id, std::move(ev));
  return id;
}

void messaging::drop_timer(uint64_t id) {
  event_ptr ev;
  std::lock_guard<std::mutex> guard{timers_mtx_};
  if (auto i = timers_.find(id); i != timers_.end()) {
    ev = std::move(i->second);
    timers_.erase(i);
  }
}

bool messaging::cancel_timer(uint64_t id, event_ptr* out) {
  event_ptr ev; // freed after the lock
  {
    std::lock_guard<std::mutex> guard{timers_mtx_};
    auto i = timers_.find(id);
    if (i == timers_.end())
      return false;
    ev = std::move(i->second);
    timers_.erase(i);
  }
  timers_cancelled_.fetch_add(1, std::memory_order_relaxed);
  if (out)
    *out = std::move(ev);
  return true;
}

event_ptr messaging::take_timer(uint64_t id) {
  std::lock_guard<std::mutex> guard{timers_mtx_};
  auto i = timers_.find(id);
  if (i == timers_.end())
    return nullptr;
  auto ev = std::move(i->second);
  timers_.erase(i);
  return ev;
}

uint64_t messaging::put_timer(uint64_t id, event_ptr ev) {
  std::lock_guard<std::mutex> guard{timers_mtx_};
  if (id == 0)
    id = next_timer_++;
  timers_[id] = std::move(ev);
  return id;
}

void messaging::fire_timer(uint64_t id) {
  event_ptr ev;
  {
    std::lock_guard<std::mutex> guard{timers_mtx_};
    auto i = timers_.find(id);
    if (i == timers_.end())
      return; // cancelled
    ev = std::move(i->second);
    timers_.erase(i);
  }
  timers_fired_.fetch_add(1, std::memory_order_relaxed);
  // `max_timers` bounds how far past `max_in_flight` this goes.
  send_due(std::move(ev));
}

void messaging::arm_timer(uint64_t id, caf::timespan delay) {
  // One actor, one clock queue: two timers of a key fire in due order even
  // when the key's lane moved to another shard in between (a kill -9 drill
  // saw them cross when each shard fired its own).
  caf::delayed_anon_send(timer_actor_, delay, tell_timer_atom::value, id);
}

void messaging::send_due(event_ptr ev) {
  // Nobody is left to refuse it to.
  in_flight_.fetch_add(1, std::memory_order_acq_rel);
  (void) send(std::move(ev));
}

void messaging::send_kept(std::vector<event_ptr>& evs) {
  for (auto& ev : evs)
    (void) send(std::move(ev)); // stopped: sent again after the restart
  evs.clear();
}

namespace {
// Delivered numbers waiting for senders that may never run again: past
// this many they are forgotten here, and such a sender's record keeps the
// messages until a restart sends them again, to be dropped at the target.
constexpr size_t max_delivered = size_t{1} << 22;
} // namespace

void messaging::delivered(const std::vector<std::pair<key, uint64_t>>& done) {
  if (done.empty())
    return;
  std::lock_guard<std::mutex> guard{delivered_mtx_};
  if (delivered_count_ + done.size() > max_delivered) {
    delivered_.clear();
    delivered_count_ = 0;
  }
  for (const auto& [sender, number] : done)
    delivered_[sender].push_back(number);
  delivered_count_ += done.size();
}

std::vector<uint64_t> messaging::take_delivered(const key& sender) {
  std::vector<uint64_t> out;
  std::lock_guard<std::mutex> guard{delivered_mtx_};
  if (auto i = delivered_.find(sender); i != delivered_.end()) {
    out = std::move(i->second);
    delivered_.erase(i);
    delivered_count_ -= out.size();
  }
  return out;
}

messaging_counters messaging::counters() const {
  messaging_counters c;
  c.sent = sent_.load(std::memory_order_relaxed);
  c.refused = refused_.load(std::memory_order_relaxed);
  c.in_flight = in_flight_.load(std::memory_order_relaxed);
  c.asks = asks_.load(std::memory_order_relaxed);
  c.ask_timeouts = ask_timeouts_.load(std::memory_order_relaxed);
  c.timers_fired = timers_fired_.load(std::memory_order_relaxed);
  c.timers_cancelled = timers_cancelled_.load(std::memory_order_relaxed);
  {
    std::lock_guard<std::mutex> guard{timers_mtx_};
    c.timers_pending = timers_.size();
  }
  return c;
}

} // namespace keylane::detail
