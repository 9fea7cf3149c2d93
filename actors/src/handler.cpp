// SPDX-License-Identifier: Apache-2.0
#include "keylane/handler.hpp"

#include <utility>

#include <caf/actor_cast.hpp>
#include <caf/send.hpp>

#include "keylane/detail/completion_core.hpp"
#include "keylane/detail/handler_host.hpp"
#include "keylane/detail/lane.hpp"
#include "keylane/detail/messages.hpp"
#include "keylane/detail/shard.hpp"

namespace keylane {

void handler_base::on_activate(const key&) {
  // nop
}

void handler_base::on_retire(const key&) {
  // nop
}

void handler_base::run_later(caf::timespan delay, detail::unique_function fn) {
  if (host_)
    return host_->run_later(delay, std::move(fn));
  lane_->schedule(delay, std::move(fn));
}

std::chrono::steady_clock::time_point handler_base::now() const {
  if (host_)
    return host_->now();
  return std::chrono::steady_clock::now();
}

bool handler_base::cancel_timer(timer_id id) {
  if (host_)
    return host_->cancel_timer(id);
  return lane_->cancel_timer(id);
}

void handler_base::hold() {
  if (host_)
    return host_->hold(true);
  lane_->hold(true);
}

void handler_base::release() {
  if (host_)
    return host_->hold(false);
  lane_->hold(false);
}

void handler_base::set_turn_budget(size_t events) {
  if (host_)
    return host_->set_turn_budget(events);
  lane_->set_turn_budget(events);
}

errc handler_base::send_message(detail::event_ptr ev) {
  if (host_)
    return host_->tell(std::move(ev));
  return lane_->tell(std::move(ev));
}

errc handler_base::send_timer(caf::timespan delay, detail::event_ptr ev,
                              timer_id& id) {
  if (host_)
    return host_->tell_after(delay, std::move(ev), id);
  return lane_->tell_after(delay, std::move(ev), id);
}

errc handler_base::send_ask(detail::event_ptr ev, detail::ask_route& route,
                            caf::timespan timeout,
                            std::unique_ptr<detail::ask_waiter> waiter) {
  if (host_)
    return host_->ask(std::move(ev), route, timeout, std::move(waiter));
  return lane_->ask(std::move(ev), route, timeout, std::move(waiter));
}

} // namespace keylane

namespace keylane::detail {

void handler_host::bind(handler_base& h, handler_host* host,
                        caf::event_based_actor* self, const keylane::key* k) {
  h.host_ = host;
  h.self_ = self;
  h.key_ = k;
  h.lane_ = nullptr;
}

completion_core::completion_core(completion_core&& other) noexcept
  : owner_(other.owner_),
    lane_id_(other.lane_id_),
    host_(other.host_),
    token_(other.token_),
    slot_(other.slot_),
    deadline_(other.deadline_),
    handle_(std::move(other.handle_)) {
  other.owner_ = nullptr;
  pin();
}

completion_core& completion_core::operator=(completion_core&& other) noexcept {
  if (this != &other) {
    if (owner_)
      finish(outcome::failed, "dropped completion (overwritten)", nullptr);
    owner_ = other.owner_;
    lane_id_ = other.lane_id_;
    host_ = other.host_;
    token_ = other.token_;
    slot_ = other.slot_;
    deadline_ = other.deadline_;
    handle_ = std::move(other.handle_);
    other.owner_ = nullptr;
    pin();
  }
  return *this;
}

void completion_core::drop() noexcept {
  // noexcept as the destructor it serves was: a completion that cannot
  // even report its drop (no memory for the message) ends the process.
  finish(outcome::failed,
         "dropped completion: the handler let its completion go without "
         "calling ok, skip or fail",
         nullptr);
}

void completion_core::pin() {
  // The handler's first move of its completion happens inside its call
  // (on the shard's thread), while the shard surely lives: take a strong
  // reference then (the runtime's own hand-over does not come here).
  if (owner_ && !handle_)
    handle_ = caf::actor_cast<caf::actor>(host_);
}

bool completion_core::synchronous() const noexcept {
  return owner_ != nullptr && lane::in_sync_call_of(lane_id_, token_);
}

void completion_core::finish_in_call(outcome status) noexcept {
  auto* owner = std::exchange(owner_, nullptr);
  owner->finish_sync(token_, status, false);
  handle_ = nullptr;
}

void completion_core::finish(outcome status, std::string&& error,
                             result_box_ptr box, bool permanent) {
  auto* owner = owner_;
  if (!owner)
    return;
  owner_ = nullptr;
  if (lane::in_sync_call(lane_id_)) {
    // Its lane is the one running on this thread, so it is alive.
    owner->finish_sync(token_, status, std::move(error), permanent);
    handle_ = nullptr;
    return;
  }
  auto dest = handle_ ? std::move(handle_) : caf::actor_cast<caf::actor>(host_);
  caf::anon_send(dest, complete_atom::value, lane_id_, token_,
                 static_cast<uint8_t>(status), permanent, std::move(error),
                 std::move(box));
}

} // namespace keylane::detail
