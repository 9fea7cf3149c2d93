#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <utility>
#include <vector>

#include "keylane/key.hpp"

namespace keylane::detail {

/// Keys waiting for a lane slot, oldest first: ordered by the sequence
/// number of each key's oldest waiting event, so admission follows
/// submission order even though ingress hands events over per producer
/// queue (moodycamel is FIFO per producer token only). Under global order
/// this keeps the output's awaited event from waiting behind younger keys.
/// May hold stale entries (the supervisor skips keys no longer waiting).
/// Single-threaded (the supervisor's).
class waiting_keys {
public:
  /// Adds `k`, whose oldest waiting event is `seq`.
  void push(uint64_t seq, key k) {
    uint32_t slot;
    if (free_.empty()) {
      slot = static_cast<uint32_t>(keys_.size());
      keys_.push_back(std::move(k));
    } else {
      slot = free_.back();
      free_.pop_back();
      keys_[slot] = std::move(k);
    }
    heap_.emplace_back(seq, slot);
    std::push_heap(heap_.begin(), heap_.end(), later);
  }

  /// Removes and returns the key with the oldest event.
  key pop() {
    std::pop_heap(heap_.begin(), heap_.end(), later);
    auto slot = heap_.back().second;
    heap_.pop_back();
    auto k = std::move(keys_[slot]);
    free_.push_back(slot);
    if (heap_.empty()) { // every slot is free: start over
      keys_.clear();
      free_.clear();
    }
    return k;
  }

  /// How many keys wait with an older event than `k`'s.
  [[nodiscard]] size_t ahead_of(const key& k) const {
    auto self = std::find_if(heap_.begin(), heap_.end(), [&](const auto& x) {
      return keys_[x.second] == k;
    });
    if (self == heap_.end())
      return 0;
    return static_cast<size_t>(
      std::count_if(heap_.begin(), heap_.end(),
                    [&self](const auto& x) { return x.first < self->first; }));
  }

  [[nodiscard]] size_t size() const noexcept { return heap_.size(); }
  [[nodiscard]] bool empty() const noexcept { return heap_.empty(); }
  void clear() noexcept {
    heap_.clear();
    keys_.clear();
    free_.clear();
  }
  /// `clear`, and gives the memory of the longest queue so far back.
  void release() {
    std::vector<item>{}.swap(heap_);
    std::vector<key>{}.swap(keys_);
    std::vector<uint32_t>{}.swap(free_);
  }

private:
  // The heap orders small (sequence number, slot) pairs; the keys stay put
  // in `keys_`. The heap holds up to `window` keys on new_keys, where
  // sifting 16-byte entries instead of 64-byte (number, key) pairs took its
  // share of CPU from ~8 % to ~6 % (perf, one run each).
  using item = std::pair<uint64_t, uint32_t>;
  static bool later(const item& a, const item& b) { return a.first > b.first; }
  std::vector<item> heap_;
  std::vector<key> keys_;      // by slot
  std::vector<uint32_t> free_; // slots not in the heap
};

} // namespace keylane::detail
