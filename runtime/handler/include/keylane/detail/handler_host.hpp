// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>

#include <caf/timespan.hpp>

#include "keylane/detail/asked_event.hpp"
#include "keylane/detail/event_base.hpp"
#include "keylane/detail/unique_function.hpp"
#include "keylane/errc.hpp"
#include "keylane/key.hpp"

namespace caf {
class event_based_actor;
} // namespace caf

namespace keylane {
class handler_base;
} // namespace keylane

namespace keylane::detail {

/// What a handler that runs outside a lane calls where it would call its
/// lane: the test kit (`keylane/testing`) hosts handlers in one thread and
/// records their messages and timers. A handler built by the runtime has
/// none, and its calls go to its lane as before. Each verb has the meaning
/// of the `handler_base` member of the same name.
class handler_host {
public:
  virtual ~handler_host() = default;

  [[nodiscard]] virtual std::chrono::steady_clock::time_point now() = 0;
  virtual void run_later(caf::timespan delay, unique_function fn) = 0;
  virtual bool cancel_timer(uint64_t id) = 0;
  virtual void hold(bool on) = 0;
  virtual void set_turn_budget(size_t events) = 0;
  [[nodiscard]] virtual errc tell(event_ptr ev) = 0;
  [[nodiscard]] virtual errc tell_after(caf::timespan delay, event_ptr ev,
                                        uint64_t& id) = 0;
  [[nodiscard]] virtual errc ask(event_ptr ev, ask_route& route,
                                 caf::timespan timeout,
                                 std::unique_ptr<ask_waiter> waiter) = 0;

  /// Binds `h` to `host`: from now on `h`'s `self()` is `self`, its
  /// `current_key()` is `*k` (which must outlive `h`), and its messaging
  /// calls go to `host`.
  static void bind(handler_base& h, handler_host* host,
                   caf::event_based_actor* self, const keylane::key* k);
};

} // namespace keylane::detail
