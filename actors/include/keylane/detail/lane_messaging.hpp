// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <unordered_map>
#include <utility>
#include <vector>

#include <caf/timespan.hpp>

#include "keylane/detail/asked_event.hpp"
#include "keylane/detail/event_base.hpp"
#include "keylane/detail/unique_function.hpp"
#include "keylane/errc.hpp"
#include "keylane/key.hpp"

namespace keylane::detail {

class logger;
class messaging;
class shard;
class state_cursor;
struct payload_ops;

/// A lane's messaging part: what the running attempt sent (tells, and
/// timers not yet armed), the asks waiting for answers, the handler's
/// timers (`run_later`, ask timeouts) and the CAF requests the handler
/// made. The lane owns one by value; each verb takes the runtime service
/// it uses (`messaging`, the lane's shard for requests) as an argument.
/// The lane arms the timers it adds (a timer message to its shard) and
/// runs their callbacks. Used only on the lane's shard thread.
class lane_messaging {
public:
  /// Nothing sent, armed, asked or requested waits (the lane may move).
  [[nodiscard]] bool quiet() const noexcept {
    return outbox_.empty() && timers_.empty() && asks_.empty()
           && requests_.empty();
  }
  /// The running attempt sent messages, kept until it ends.
  [[nodiscard]] bool has_outbox() const noexcept { return !outbox_.empty(); }

  /// A tell (its slot of `msg` reserved): kept until the running attempt
  /// ends well if `in_attempt`, else sent now.
  [[nodiscard]] errc tell(event_ptr ev, bool in_attempt, messaging& msg);
  /// A `tell_after` timer `id` (added to `msg`) to arm after `delay`:
  /// when the running attempt ends well if `in_attempt`, else now.
  /// `self`: a timer to this key.
  void tell_after(uint64_t id, caf::timespan delay, bool self,
                  bool in_attempt, messaging& msg);
  /// The attempt ended well: sends what it kept.
  void send_outbox(messaging& msg);
  /// The attempt ended well and the key keeps its messages in `state`:
  /// moves its tells, and its timers to itself, into the state's record
  /// (the write sends them); what cannot be encoded stays to be sent
  /// unkept (`send_outbox`).
  void keep_outbox(state_cursor& state, const keylane::key& k,
                   const payload_ops& ops, messaging& msg, logger& log);
  /// The attempt failed: what it sent is dropped.
  void drop_outbox(messaging& msg);

  /// Adds a handler timer; the caller arms it under the returned id.
  [[nodiscard]] uint64_t add_timer(unique_function fn) {
    auto id = ++next_timer_;
    timers_.emplace(id, std::move(fn));
    return id;
  }
  /// Timer `timer` fired: moves its callback into `fn`; false if it is
  /// gone (answered ask, or the instance that armed it).
  [[nodiscard]] bool take_timer(uint64_t timer, unique_function& fn);

  /// Ask `ask` waits for its answer, its timeout armed as `timer`.
  void add_ask(uint64_t ask, std::unique_ptr<ask_waiter> waiter,
               uint64_t timer) {
    asks_.emplace(ask, pending_ask{std::move(waiter), timer});
  }
  /// Ask `ask` was answered: its waiter (its timeout disarmed), or null if
  /// it timed out or the instance that asked is gone.
  [[nodiscard]] std::unique_ptr<ask_waiter> take_answered(uint64_t ask);
  /// Ask `ask` timed out after `timeout`: tells its waiter.
  void expire_ask(uint64_t ask, caf::timespan timeout, messaging& msg);

  /// The handler made CAF requests [first, last]; `host` is its shard.
  void note_requests(uint64_t first, uint64_t last, shard& host);
  /// Drops the answers to the requests made after request mark `mark` (a
  /// timed-out attempt's).
  void drop_requests_after(uint64_t mark, shard& host);

  /// The handler instance is gone: its timers, asks and requests with it.
  void forget_instance(shard& host);
  /// Stop: what the running attempt sent is dropped, timers and asks go.
  void abandon(messaging& msg);

private:
  struct outgoing {
    event_ptr ev; // null: a timer not yet armed
    uint64_t timer;
    caf::timespan delay;
    bool self; // a timer to this key
  };
  struct pending_ask {
    std::unique_ptr<ask_waiter> waiter;
    uint64_t timer;
  };

  void keep_timer(const outgoing& m, state_cursor& state,
                  const keylane::key& k, const payload_ops& ops,
                  messaging& msg, logger& log);

  // Read at every event's end: first.
  std::vector<outgoing> outbox_;
  uint64_t next_timer_ = 0;
  std::unordered_map<uint64_t, unique_function> timers_;
  std::unordered_map<uint64_t, pending_ask> asks_;
  // Requests the handler made (CAF request numbers, [first, last]): their
  // response handlers are dropped when the lane retires.
  std::vector<std::pair<uint64_t, uint64_t>> requests_;
  size_t prune_at_ = 64;
};

} // namespace keylane::detail
