// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cassert>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <type_traits>
#include <unordered_map>
#include <utility>

#include "keylane/config.hpp"
#include "keylane/detail/slot_ring.hpp"
#include "keylane/key.hpp"

namespace keylane::detail {

/// Reads an item's key: `x.k`, or `x->k` when the items are pointers.
struct member_key {
  template <class Item>
  const key& operator()(const Item& x) const noexcept {
    if constexpr (std::is_pointer_v<Item>)
      return x->k;
    else
      return x.k;
  }
};

/// One place in a global window: an item, or the gap of a number that has
/// not arrived.
template <class Item>
class reorder_slot {
public:
  [[nodiscard]] bool full() const noexcept { return x_.has_value(); }

  void fill(Item x) { x_.emplace(std::move(x)); }

  [[nodiscard]] Item take() {
    Item x = std::move(*x_);
    x_.reset();
    return x;
  }

private:
  std::optional<Item> x_;
};

// A pointer is its own gap (null), so a window of pointers stays one word a
// slot, as the sink's was.
template <class T>
class reorder_slot<T*> {
public:
  [[nodiscard]] bool full() const noexcept { return x_ != nullptr; }

  void fill(T* x) noexcept {
    assert(x != nullptr && "a pointer item must not be null");
    x_ = x;
  }

  [[nodiscard]] T* take() noexcept { return std::exchange(x_, nullptr); }

private:
  T* x_ = nullptr;
};

/// Releases items in the order of their sequence numbers: across all keys
/// (`order_mode::global`), per key (`per_key`), or as they come (`none`).
/// Sequence numbers are dense from 0 and every one must arrive exactly once
/// (a tombstone counts), or those behind it wait forever.
///
/// `global` keeps a dense window: slot `i` holds `next() + i`, so arriving
/// and releasing cost O(1) and its length is how far ahead of the awaited
/// number an arrival may be (the admission window bounds it). An owner that
/// keeps some numbers elsewhere (the sink's spill file) `put`s the others,
/// `release`s, and `skip`s the awaited number when it holds it itself.
/// `per_key` holds items by number and each key's turns (`expect`).
///
/// `Item` is a movable value or a raw pointer (never null; the buffer does
/// not delete what it points to, so its owner `drain`s it first). `KeyOf`
/// gives an item's key (`per_key` only); `member_key` reads its `k`.
///
/// Thread-safety: none. Its owner serialises every call (the pipeline
/// under its lock, the sink as one actor); items are appended to the
/// caller's output in release order, by the call that releases them.
template <class Item, class KeyOf = member_key>
class reorder_buffer {
  static_assert(std::is_move_constructible_v<Item>,
                "Item must be move constructible");
  static_assert(std::is_nothrow_destructible_v<Item>,
                "Item must be nothrow destructible");

public:
  explicit reorder_buffer(order_mode mode, KeyOf key_of = {})
    : mode_(mode), key_of_(std::move(key_of)) {}

  /// Records that `seq` of `k` was submitted; called in sequence order,
  /// before `seq` arrives. Only `per_key` needs it.
  void expect(uint64_t seq, const key& k) {
    if (mode_ == order_mode::per_key)
      turns_[k].push_back(seq);
  }

  /// Takes the item for `seq` and appends to `out` every item whose turn
  /// has come, in order. An item released at once is never counted as
  /// held.
  template <class Sink>
  void arrive(uint64_t seq, Item item, Sink& out) {
    switch (mode_) {
      case order_mode::none:
        out.push_back(std::move(item));
        return;
      case order_mode::global:
        if (seq != next_) {
          put(seq, std::move(item));
          return;
        }
        out.push_back(std::move(item));
        advance();
        release(out);
        return;
      case order_mode::per_key:
        arrive_per_key(seq, std::move(item), out);
        return;
    }
  }

  /// `global`: holds the item for `seq` (`seq >= next()`, not held yet)
  /// without releasing anything, even when it is the awaited one; `held()`
  /// and `peak()` count it. Lets an owner take a batch and release once.
  void put(uint64_t seq, Item item) {
    assert(mode_ == order_mode::global && seq >= next_);
    auto i = seq - next_;
    if (i >= window_.size())
      window_.resize(i + 1);
    assert(!window_[i].full() && "a sequence number arrived twice");
    window_[i].fill(std::move(item));
    note_held();
  }

  /// `global`: appends to `out`, in order, the held items from `next()` up
  /// to the first number not held; returns how many.
  template <class Sink>
  size_t release(Sink& out) {
    size_t n = 0;
    while (!window_.empty() && window_.front().full()) {
      out.push_back(window_.front().take());
      window_.pop_front();
      ++n;
    }
    next_ += n;
    held_ -= n;
    return n;
  }

  /// `global`: moves past the awaited number without an item, for one its
  /// owner holds elsewhere; it must not be held here. Releases nothing:
  /// call `release` next.
  void skip() {
    assert(mode_ == order_mode::global);
    assert((window_.empty() || !window_.front().full())
           && "skip of a number that is held");
    advance();
  }

  /// Moves every held item to `out`, in sequence order, and empties the
  /// buffer; for an owner that shuts down. `next()` stays; `per_key`
  /// forgets its turns.
  template <class Sink>
  void drain(Sink& out) {
    for (size_t i = 0; i < window_.size(); ++i)
      if (window_[i].full())
        out.push_back(window_[i].take());
    window_.clear();
    for (auto& [seq, x] : keyed_)
      out.push_back(std::move(x));
    keyed_.clear();
    turns_.clear();
    held_ = 0;
  }

  /// `global`: the awaited sequence number, the one released next.
  [[nodiscard]] uint64_t next() const noexcept { return next_; }

  /// Items held now.
  [[nodiscard]] size_t held() const noexcept { return held_; }

  /// Items held at most.
  [[nodiscard]] size_t peak() const noexcept { return peak_; }

private:
  void note_held() noexcept {
    if (++held_ > peak_)
      peak_ = held_;
  }

  // The awaited number's slot, if the window reaches it, is a gap.
  void advance() {
    if (!window_.empty())
      window_.pop_front();
    ++next_;
  }

  template <class Sink>
  void arrive_per_key(uint64_t seq, Item item, Sink& out) {
    auto t = turns_.find(key_of_(item));
    if (t == turns_.end() || t->second.front() != seq) {
      keyed_.emplace(seq, std::move(item));
      note_held();
      return;
    }
    auto& q = t->second;
    out.push_back(std::move(item));
    q.pop_front();
    while (!q.empty()) {
      auto h = keyed_.find(q.front());
      if (h == keyed_.end())
        break;
      out.push_back(std::move(h->second));
      keyed_.erase(h);
      --held_;
      q.pop_front();
    }
    if (q.empty())
      turns_.erase(t);
  }

  order_mode mode_;
  KeyOf key_of_;
  uint64_t next_ = 0;
  size_t held_ = 0;
  size_t peak_ = 0;
  // global: slot i holds sequence number next_ + i.
  // Pointers (the sink's events) over a ring that keeps its storage; other
  // items in a deque, which gives a burst's memory back as it drains.
  std::conditional_t<std::is_pointer_v<Item>, slot_ring<reorder_slot<Item>>,
                     std::deque<reorder_slot<Item>>>
    window_;
  // per_key: held items by sequence number, and each key's numbers not yet
  // released, oldest first.
  std::map<uint64_t, Item> keyed_;
  std::unordered_map<key, std::deque<uint64_t>> turns_;
};

} // namespace keylane::detail
