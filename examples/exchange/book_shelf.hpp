// SPDX-License-Identifier: Apache-2.0
#pragma once

// Where the books of retired symbols wait: a lane hands its book over in
// `on_retire` and the symbol's next lane takes it back in `on_activate`, so
// more symbols than `max_active_keys` trade without losing a resting order
// or its place.

#include <atomic>
#include <cstdint>
#include <mutex>
#include <string>
#include <unordered_map>

#include "order_book.hpp"

namespace exchange {

/// Books of symbols without a live lane.
///
/// Thread-safety: `take` and `put` may be called from any shard thread;
/// keylane never runs two lanes of one symbol at once, so a symbol's `put`
/// happens before its next `take`.
class book_shelf {
public:
  /// The book of `symbol`: the one put back at its last retire, or an
  /// empty one.
  [[nodiscard]] order_book take(const std::string& symbol);

  /// Keeps `book` until its symbol's next `take`.
  void put(order_book&& book);

  /// Retires so far, and the resting orders they handed over in total.
  [[nodiscard]] uint64_t retires() const noexcept { return retires_; }
  [[nodiscard]] uint64_t resting_kept() const noexcept { return resting_kept_; }
  /// Activations that found a book with resting orders.
  [[nodiscard]] uint64_t restored() const noexcept { return restored_; }

private:
  std::mutex mtx_;
  std::unordered_map<std::string, order_book> books_;
  std::atomic<uint64_t> retires_{0};
  std::atomic<uint64_t> resting_kept_{0};
  std::atomic<uint64_t> restored_{0};
};

} // namespace exchange
