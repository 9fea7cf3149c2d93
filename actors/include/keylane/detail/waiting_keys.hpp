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
    heap_.emplace_back(seq, std::move(k));
    std::push_heap(heap_.begin(), heap_.end(), later);
  }

  /// Removes and returns the key with the oldest event.
  key pop() {
    std::pop_heap(heap_.begin(), heap_.end(), later);
    auto k = std::move(heap_.back().second);
    heap_.pop_back();
    return k;
  }

  /// How many keys wait with an older event than `k`'s.
  [[nodiscard]] size_t ahead_of(const key& k) const {
    auto self = std::find_if(heap_.begin(), heap_.end(),
                             [&k](const auto& x) { return x.second == k; });
    if (self == heap_.end())
      return 0;
    return static_cast<size_t>(
      std::count_if(heap_.begin(), heap_.end(),
                    [&self](const auto& x) { return x.first < self->first; }));
  }

  [[nodiscard]] size_t size() const noexcept { return heap_.size(); }
  [[nodiscard]] bool empty() const noexcept { return heap_.empty(); }
  void clear() noexcept { heap_.clear(); }

private:
  static bool later(const std::pair<uint64_t, key>& a,
                    const std::pair<uint64_t, key>& b) {
    return a.first > b.first;
  }
  std::vector<std::pair<uint64_t, key>> heap_;
};

} // namespace keylane::detail
