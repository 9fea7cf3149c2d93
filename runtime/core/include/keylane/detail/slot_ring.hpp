// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstddef>
#include <utility>
#include <vector>

namespace keylane::detail {

/// A window of slots, addressed from its front: `std::deque`'s subset that
/// `reorder_buffer` uses, over one power-of-two ring. The sink moves its
/// window by one slot per event; a deque paid for that in block arithmetic
/// and a block allocated and freed every 64 slots (~60 instructions per
/// event). Slots past `size()` are kept default (empty), so growing is
/// only a count. Storage is kept for the next burst up to `keep_max`
/// slots; past that an emptied ring gives it back. Not thread-safe.
template <class Slot>
class slot_ring {
public:
  static constexpr size_t keep_max = 65536;

  [[nodiscard]] bool empty() const noexcept { return size_ == 0; }
  [[nodiscard]] size_t size() const noexcept { return size_; }
  [[nodiscard]] size_t capacity() const noexcept { return slots_.size(); }

  [[nodiscard]] Slot& operator[](size_t i) noexcept {
    return slots_[(head_ + i) & (slots_.size() - 1)];
  }
  [[nodiscard]] Slot& front() noexcept { return slots_[head_]; }

  /// Makes the window `n` slots long (never shorter): the new slots are
  /// empty.
  void resize(size_t n) {
    if (n <= size_)
      return;
    if (n > slots_.size())
      grow(n);
    size_ = n;
  }

  /// Drops the front slot, which must be empty (taken) by now.
  void pop_front() noexcept {
    head_ = (head_ + 1) & (slots_.size() - 1);
    if (--size_ == 0) {
      head_ = 0;
      if (slots_.size() > keep_max)
        std::vector<Slot>{}.swap(slots_);
    }
  }

  /// Empties the window; its slots must be empty (taken) by now.
  void clear() noexcept {
    size_ = 0;
    head_ = 0;
  }

private:
  void grow(size_t n) {
    size_t cap = slots_.empty() ? 64 : slots_.size();
    while (cap < n)
      cap *= 2;
    std::vector<Slot> next(cap);
    for (size_t i = 0; i < size_; ++i)
      next[i] = std::move((*this)[i]);
    slots_.swap(next);
    head_ = 0;
  }

  std::vector<Slot> slots_; // size 0 or a power of two
  size_t head_ = 0;
  size_t size_ = 0;
};

} // namespace keylane::detail
