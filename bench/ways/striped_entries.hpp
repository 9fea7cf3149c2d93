// SPDX-License-Identifier: Apache-2.0
#pragma once

// The per-key table of the keyed baselines (keyed_slots, caf_lanes): one
// entry per key at a fixed address, in 64 stripes each under its own
// lock, as keylane's backlog stripes its keys.

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>

#include <tsl/robin_map.h>

namespace keylane::bench {

/// `Entry` has an `std::atomic<uint64_t> unfinished`; `Hash` hashes `Key`.
template <class Key, class Entry, class Hash>
class striped_entries {
public:
  /// `k`'s entry (made on its first event) with one more unfinished
  /// event; `idle`: it had none, so the caller may place the key anew.
  Entry* add(const Key& k, bool& idle) {
    return add(k, idle, [](Entry&, bool) {});
  }

  /// As `add`, and runs `fn(entry, idle)` under the stripe lock.
  template <class F>
  Entry* add(const Key& k, bool& idle, F&& fn) {
    auto& s = stripes_[Hash{}(k) >> 58];
    std::lock_guard<std::mutex> guard{s.mtx};
    auto& e = s.entries[k];
    if (!e)
      e = std::make_unique<Entry>();
    idle = e->unfinished.fetch_add(1, std::memory_order_acq_rel) == 0;
    fn(*e, idle);
    return e.get();
  }

  /// Runs `fn(entry)` under the stripe lock of `k`, whose entry exists.
  template <class F>
  void locked(const Key& k, F&& fn) {
    auto& s = stripes_[Hash{}(k) >> 58];
    std::lock_guard<std::mutex> guard{s.mtx};
    fn(*s.entries[k]);
  }

  /// Calls `fn(entry)` for every entry, each under its stripe's lock.
  template <class F>
  void for_each(F&& fn) {
    for (auto& s : stripes_) {
      std::lock_guard<std::mutex> guard{s.mtx};
      for (auto& kv : s.entries)
        fn(*kv.second);
    }
  }

private:
  struct alignas(64) stripe {
    std::mutex mtx;
    tsl::robin_map<Key, std::unique_ptr<Entry>, Hash> entries;
  };
  stripe stripes_[64];
};

} // namespace keylane::bench
