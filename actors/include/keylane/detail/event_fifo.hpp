// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <utility>

#include "keylane/detail/event_base.hpp"

namespace keylane::detail {

/// A lane's queue of events: FIFO, linked through the events themselves
/// (`event_base::next`), and it owns them. With thousands of keys a lane
/// is cold when its next event comes; a queue buffer of its own was one
/// more cache line missed per event (and a vector to grow, keep and hand
/// on at each activation), where the events are touched anyway.
/// Not thread-safe: only its lane's shard touches it.
class event_fifo {
public:
  event_fifo() = default;
  event_fifo(const event_fifo&) = delete;
  event_fifo& operator=(const event_fifo&) = delete;
  ~event_fifo() { clear(); }

  [[nodiscard]] bool empty() const noexcept { return head_ == nullptr; }

  void push_back(event_ptr ev) noexcept {
    auto* p = ev.release();
    p->next = nullptr;
    (tail_ != nullptr ? tail_->next : head_) = p;
    tail_ = p;
  }

  /// Takes the oldest event; the queue must not be empty.
  [[nodiscard]] event_ptr pop_front() noexcept {
    auto* p = head_;
    head_ = std::exchange(p->next, nullptr);
    if (head_ == nullptr)
      tail_ = nullptr;
    return event_ptr{p};
  }

  /// Deletes every event it holds.
  void clear() noexcept {
    while (!empty())
      (void) pop_front();
  }

  /// Calls `fn(const event_base&)` for each event, oldest first, until it
  /// returns true; returns whether one did.
  template <class F>
  bool find_if(F&& fn) const {
    for (const auto* p = head_; p != nullptr; p = p->next)
      if (fn(*p))
        return true;
    return false;
  }

private:
  event_base* head_ = nullptr;
  event_base* tail_ = nullptr;
};

} // namespace keylane::detail
