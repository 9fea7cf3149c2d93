// SPDX-License-Identifier: Apache-2.0
#include "keylane/detail/stop_ledger.hpp"

#include <caf/abstract_actor.hpp>

namespace keylane::detail {

void stop_ledger::watch(caf::abstract_actor& self) {
  live_actors_.fetch_add(1, std::memory_order_seq_cst);
  // Not in on_exit: CAF calls it before it empties the mailbox, and an
  // event in a message dropped then would reach the ledger after `take`.
  self.attach_functor([this] {
    live_actors_.fetch_sub(1, std::memory_order_seq_cst);
    waiter_.wake_if_waiting();
  });
}

void stop_ledger::abandon(event_ptr ev, const char* stage) {
  if (!ev)
    return;
  std::lock_guard<std::mutex> guard{mtx_};
  abandoned_.push_back(unfinished_event{ev->seq, ev->k, stage});
  if (keep_ && ev->status == outcome::pending)
    to_keep_.push_back(std::move(ev));
}

void stop_ledger::abandon(uint64_t seq, const key& k, const char* stage) {
  std::lock_guard<std::mutex> guard{mtx_};
  abandoned_.push_back(unfinished_event{seq, k, stage});
}

void stop_ledger::take(std::vector<unfinished_event>& unfinished,
                       std::vector<event_ptr>& to_keep) {
  std::lock_guard<std::mutex> guard{mtx_};
  unfinished = std::move(abandoned_);
  abandoned_.clear();
  to_keep = std::move(to_keep_);
  to_keep_.clear();
}

} // namespace keylane::detail
