#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <unordered_map>
#include <utility>

#include "keylane/config.hpp"
#include "keylane/key.hpp"

namespace keylane::detail {

/// Releases items in the order of their sequence numbers: across all keys
/// (`order_mode::global`), per key (`per_key`), or as they come (`none`).
/// Sequence numbers are dense from 0 and every one must arrive exactly once
/// (a tombstone counts), or those behind it wait forever.
///
/// `Item` has a `key k` member. Thread-safety: none; its owner serialises
/// every call.
template <class Item>
class reorder_buffer {
public:
  explicit reorder_buffer(order_mode mode) : mode_(mode) {}

  /// Records that `seq` of `k` was submitted; called in sequence order,
  /// before `seq` arrives. Only `per_key` needs it.
  void expect(uint64_t seq, const key& k) {
    if (mode_ == order_mode::per_key)
      turns_[k].push_back(seq);
  }

  /// Takes the item for `seq` and appends to `out` every item whose turn
  /// has come, in order.
  template <class Sink>
  void arrive(uint64_t seq, Item item, Sink& out) {
    switch (mode_) {
      case order_mode::none:
        out.push_back(std::move(item));
        return;
      case order_mode::global:
        if (seq != next_) {
          hold(seq, std::move(item));
          return;
        }
        out.push_back(std::move(item));
        ++next_;
        release_global(out);
        return;
      case order_mode::per_key:
        arrive_per_key(seq, std::move(item), out);
        return;
    }
  }

  /// Items held now.
  [[nodiscard]] size_t held() const noexcept { return held_.size(); }

  /// Items held at most.
  [[nodiscard]] size_t peak() const noexcept { return peak_; }

private:
  void hold(uint64_t seq, Item item) {
    held_.emplace(seq, std::move(item));
    if (held_.size() > peak_)
      peak_ = held_.size();
  }

  template <class Sink>
  void release_global(Sink& out) {
    for (auto i = held_.begin(); i != held_.end() && i->first == next_;
         i = held_.erase(i), ++next_)
      out.push_back(std::move(i->second));
  }

  template <class Sink>
  void arrive_per_key(uint64_t seq, Item item, Sink& out) {
    auto t = turns_.find(item.k);
    if (t == turns_.end() || t->second.front() != seq) {
      hold(seq, std::move(item));
      return;
    }
    auto& q = t->second;
    out.push_back(std::move(item));
    q.pop_front();
    while (!q.empty()) {
      auto h = held_.find(q.front());
      if (h == held_.end())
        break;
      out.push_back(std::move(h->second));
      held_.erase(h);
      q.pop_front();
    }
    if (q.empty())
      turns_.erase(t);
  }

  order_mode mode_;
  uint64_t next_ = 0;
  std::map<uint64_t, Item> held_;
  // per_key: each key's sequence numbers not yet released, oldest first.
  std::unordered_map<key, std::deque<uint64_t>> turns_;
  size_t peak_ = 0;
};

} // namespace keylane::detail
