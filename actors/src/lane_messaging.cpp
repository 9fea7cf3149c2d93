// SPDX-License-Identifier: Apache-2.0
// A lane's messaging part: an attempt's outbox (sent, kept in the state,
// or dropped as the attempt ends), its asks and timers, and the handler's
// CAF requests.
#include "keylane/detail/lane_messaging.hpp"

#include <algorithm>
#include <chrono>
#include <string>
#include <utility>

#include "keylane/detail/logger.hpp"
#include "keylane/detail/messaging.hpp"
#include "keylane/detail/payload_ops.hpp"
#include "keylane/detail/shard.hpp"
#include "keylane/detail/state_cursor.hpp"

namespace keylane::detail {

errc lane_messaging::tell(event_ptr ev, bool in_attempt, messaging& msg) {
  if (in_attempt) {
    outbox_.push_back(outgoing{std::move(ev), 0, caf::timespan{0}, false});
    return errc::none;
  }
  return msg.send(std::move(ev));
}

void lane_messaging::tell_after(uint64_t id, caf::timespan delay, bool self,
                                bool in_attempt, messaging& msg) {
  if (in_attempt)
    outbox_.push_back(outgoing{nullptr, id, delay, self});
  else
    msg.arm_timer(id, delay);
}

bool lane_messaging::take_timer(uint64_t timer, unique_function& fn) {
  auto i = timers_.find(timer);
  if (i == timers_.end())
    return false;
  fn = std::move(i->second);
  timers_.erase(i);
  return true;
}

std::unique_ptr<ask_waiter> lane_messaging::take_answered(uint64_t ask) {
  auto i = asks_.find(ask);
  if (i == asks_.end())
    return nullptr;
  auto waiter = std::move(i->second.waiter);
  timers_.erase(i->second.timer);
  asks_.erase(i);
  return waiter;
}

void lane_messaging::expire_ask(uint64_t ask, caf::timespan timeout,
                                messaging& msg) {
  auto i = asks_.find(ask);
  if (i == asks_.end())
    return;
  auto waiter = std::move(i->second.waiter);
  asks_.erase(i);
  msg.ask_timed_out();
  auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(timeout);
  // Runs inside the timer's handler call (lane::on_timer).
  waiter->answer(errc::ask_timeout,
                 "no answer within " + std::to_string(ms.count()) + " ms",
                 nullptr);
}

void lane_messaging::send_outbox(messaging& msg) {
  for (auto& m : outbox_) {
    if (m.ev)
      (void) msg.send(std::move(m.ev)); // stopped: dropped, counted
    else
      msg.arm_timer(m.timer, m.delay);
  }
  outbox_.clear();
}

void lane_messaging::keep_outbox(state_cursor& state, const keylane::key& k,
                                 const payload_ops& ops, messaging& msg,
                                 logger& log) {
  size_t left = 0; // what stays for `send_outbox`, at the front
  auto keep_unkept = [this](outgoing& m, size_t& at) {
    if (&outbox_[at] != &m)
      outbox_[at] = std::move(m);
    ++at;
  };
  for (auto& m : outbox_) {
    if (!m.ev) {
      if (m.self)
        keep_timer(m, state, k, ops, msg, log);
      keep_unkept(m, left); // armed when the event ends, kept or not
      continue;
    }
    auto bytes = ops.encode_message(*m.ev);
    if (!bytes) {
      // Sent as without `exactly_once`: late is better than never.
      log.write(log_level::error,
                "messaging: a message of key " + k.to_string()
                  + " cannot be encoded, so it is sent unkept: "
                  + render(bytes.error()));
      keep_unkept(m, left);
      continue;
    }
    auto number = state.keep(kept_message{m.ev->k, 0, 0, std::move(*bytes)});
    state.send_with_write(
      ops.keep_message(*m.ev, message_origin{k, number}));
  }
  outbox_.resize(left);
}

// A timer to itself lives in the key's record until it fires into its
// state: it needs no wait for a write, since its effect and its existence
// are written together. It stays armed in the runtime's table as before.
void lane_messaging::keep_timer(const outgoing& m, state_cursor& state,
                                const keylane::key& k,
                                const payload_ops& ops, messaging& msg,
                                logger& log) {
  auto ev = msg.take_timer(m.timer);
  if (!ev)
    return; // cancelled within its own attempt
  auto bytes = ops.encode_message(*ev);
  if (!bytes) {
    log.write(log_level::error,
              "messaging: a timer of key " + k.to_string()
                + " cannot be encoded, so it is not kept: "
                + render(bytes.error()));
    (void) msg.put_timer(m.timer, std::move(ev));
    return;
  }
  auto now = std::chrono::duration_cast<std::chrono::milliseconds>(
               std::chrono::system_clock::now().time_since_epoch())
               .count();
  auto due = now
             + std::chrono::duration_cast<std::chrono::milliseconds>(m.delay)
                 .count();
  auto number = state.keep(
    kept_message{k, 0, std::max<int64_t>(due, 1), std::move(*bytes)});
  (void) msg.put_timer(
    m.timer, ops.keep_message(*ev, message_origin{k, number, true}));
}

void lane_messaging::drop_outbox(messaging& msg) {
  for (auto& m : outbox_) {
    if (m.ev)
      msg.release();
    else
      msg.drop_timer(m.timer);
  }
  outbox_.clear();
}

void lane_messaging::note_requests(uint64_t first, uint64_t last,
                                   shard& host) {
  auto& rs = requests_;
  if (!rs.empty() && rs.back().second + 1 == first) {
    rs.back().second = last; // no other lane asked in between
    return;
  }
  rs.emplace_back(first, last);
  // A long-lived lane asks often: keep only ranges still awaiting answers
  // (doubling the threshold keeps this amortised O(1) per range).
  if (rs.size() >= prune_at_) {
    host.keep_unanswered(rs);
    prune_at_ = std::max<size_t>(64, 2 * rs.size());
  }
}

void lane_messaging::drop_requests_after(uint64_t mark, shard& host) {
  std::vector<std::pair<uint64_t, uint64_t>> asked;
  for (auto& [first, last] : requests_)
    if (last > mark)
      asked.emplace_back(std::max(first, mark + 1), last);
  if (!asked.empty())
    host.drop_responses(asked);
}

void lane_messaging::forget_instance(shard& host) {
  timers_.clear();
  asks_.clear();
  if (!requests_.empty())
    host.drop_responses(requests_);
  requests_.clear();
}

void lane_messaging::abandon(messaging& msg) {
  drop_outbox(msg);
  timers_.clear();
  asks_.clear();
}

} // namespace keylane::detail
