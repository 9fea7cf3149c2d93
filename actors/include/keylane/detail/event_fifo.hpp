// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstddef>
#include <utility>
#include <vector>

#include "keylane/detail/event_base.hpp"

namespace keylane::detail {

/// A lane's queue of events: FIFO over one vector, consumed from a moving
/// head. Unlike `std::deque`, an empty one allocates nothing (libstdc++'s
/// deque allocates a map and a 512-byte block per instance, that is per key
/// activation), and a drained one keeps its buffer for the next events.
/// Not thread-safe: only its lane's shard touches it.
class event_fifo {
public:
  [[nodiscard]] bool empty() const noexcept { return head_ == items_.size(); }
  [[nodiscard]] size_t size() const noexcept { return items_.size() - head_; }

  void push_back(event_ptr ev) { items_.push_back(std::move(ev)); }

  /// Takes the oldest event; the queue must not be empty.
  event_ptr pop_front() {
    auto ev = std::move(items_[head_++]);
    if (head_ == items_.size()) {
      items_.clear();
      head_ = 0;
    } else if (head_ >= 64 && head_ * 2 >= items_.size()) {
      // Consumed half or more: drop the moved-from prefix, amortised O(1).
      items_.erase(items_.begin(), items_.begin() + static_cast<std::ptrdiff_t>(head_));
      head_ = 0;
    }
    return ev;
  }

  void clear() noexcept {
    items_.clear();
    head_ = 0;
  }

  /// Its storage, emptied, with its capacity: for another fifo to adopt.
  [[nodiscard]] std::vector<event_ptr> take_storage() noexcept {
    items_.clear();
    head_ = 0;
    return std::exchange(items_, {});
  }

  /// Uses `storage` (emptied, capacity kept) from now on; for an empty fifo.
  void adopt_storage(std::vector<event_ptr> storage) noexcept {
    storage.clear();
    items_ = std::move(storage);
    head_ = 0;
  }

  [[nodiscard]] auto begin() noexcept {
    return items_.begin() + static_cast<std::ptrdiff_t>(head_);
  }
  [[nodiscard]] auto end() noexcept { return items_.end(); }
  [[nodiscard]] auto begin() const noexcept {
    return items_.begin() + static_cast<std::ptrdiff_t>(head_);
  }
  [[nodiscard]] auto end() const noexcept { return items_.end(); }

private:
  std::vector<event_ptr> items_;
  size_t head_ = 0;
};

} // namespace keylane::detail
