// SPDX-License-Identifier: Apache-2.0
// Part of keylane/testing/kit.hpp, included at its end: one key's lane and
// the verbs its handler calls instead of a runtime lane's.
#pragma once

namespace keylane::testing {

// One key's lane: what it queues and runs, and the verbs its handler
// calls (`handler_host`).
template <class Payload, class Result>
struct kit<Payload, Result>::lane final : keylane::detail::handler_host {
  kit* owner = nullptr;
  keylane::key k;
  uint64_t id = 0;
  std::unique_ptr<handler_base> h;
  std::deque<uint64_t> queue;
  uint64_t current = 0;
  uint64_t token = 0;
  uint64_t timeout_timer = 0;
  bool awaiting = false;
  bool backing_off = false;
  bool held = false;
  std::optional<size_t> budget;
  duration dry_since{-1};
  uint64_t linger_timer = 0;
  std::vector<staged> outbox;
  std::vector<uint64_t> timers; // its run_later timers
  // Keyed state: the running event's source position, whether it was
  // applied before (a redelivery), changes not yet written, and kept
  // messages that leave with the next write.
  bool has_origin = false;
  std::string stream;
  int64_t position = 0;
  bool dirty = false;
  size_t since_write = 0;
  std::vector<std::unique_ptr<event_type>> unsent;

  bool in_attempt() const noexcept { return current != 0 && !backing_off; }

  std::chrono::steady_clock::time_point now() override {
    return owner->clock_now();
  }
  void run_later(caf::timespan delay,
                 keylane::detail::unique_function fn) override {
    auto me = id;
    auto* o = owner;
    auto shared = std::make_shared<keylane::detail::unique_function>(
      std::move(fn));
    timers.push_back(o->core_.set_timer(delay, [o, me, shared] {
      if (auto* l = o->lane_by_id(me); l && l->h)
        (*shared)();
    }));
  }
  bool cancel_timer(uint64_t timer) override {
    return owner->cancel_message_timer(timer);
  }
  void hold(bool on) override {
    held = on;
    if (!on)
      dry_since = duration{-1};
  }
  void set_turn_budget(size_t events) override {
    budget = std::min<size_t>(std::max<size_t>(events, 1), 1000000);
  }
  errc tell(keylane::detail::event_ptr ev) override {
    if (in_attempt())
      outbox.push_back(staged{std::move(ev)});
    else
      owner->leave(k, std::move(ev), message_kind::tell, {}, {});
    return errc::none;
  }
  errc tell_after(caf::timespan delay, keylane::detail::event_ptr ev,
                  uint64_t& timer) override {
    timer = ++owner->next_msg_;
    if (in_attempt()) {
      outbox.push_back(staged{std::move(ev), true, delay, timer});
      owner->staged_timers_.push_back(timer);
    } else {
      owner->arm(k, std::move(ev), delay, timer);
    }
    return errc::none;
  }
  errc ask(keylane::detail::event_ptr ev, keylane::detail::ask_route&,
           caf::timespan timeout,
           std::unique_ptr<keylane::detail::ask_waiter> waiter) override {
    owner->send_ask(*this, std::move(ev), timeout, std::move(waiter));
    return errc::none;
  }
};

} // namespace keylane::testing
