// SPDX-License-Identifier: Apache-2.0
// The state store in memory: one hash map of key to record bytes.

#include <algorithm>
#include <mutex>
#include <unordered_map>
#include <utility>
#include <vector>

#include "state_key.hpp"
#include "keylane/state_store.hpp"

namespace keylane {

namespace {

/// Thread-safe: one mutex guards every call, so each call is atomic and
/// calls take effect in the order they acquire it. `scan` works on a copy
/// taken under the mutex (a consistent snapshot, as RocksDB's iterator
/// gives) and calls `fn` without holding it, so `fn` may use the store.
class memory_state_store final : public state_store {
public:
  caf::expected<std::optional<std::string>> read(const key& k) override {
    std::lock_guard<std::mutex> guard{mtx_};
    auto i = map_.find(k);
    if (i == map_.end())
      return std::optional<std::string>{};
    return std::optional<std::string>{i->second};
  }

  caf::error write(const std::vector<state_entry>& entries, bool) override {
    // Copy first, outside the lock; then make sure every key has a node,
    // taking back the new ones if that throws (allocation), so a write is
    // all or nothing here as in RocksDB. Moving the values in cannot throw.
    // A key twice in `entries`: the later entry wins, as in a WriteBatch.
    std::vector<std::string> values;
    values.reserve(entries.size());
    for (const auto& e : entries)
      values.push_back(e.bytes);
    std::lock_guard<std::mutex> guard{mtx_};
    std::vector<std::string*> slots;
    std::vector<const key*> added;
    slots.reserve(entries.size());
    added.reserve(entries.size());
    try {
      for (const auto& e : entries) {
        auto [i, fresh] = map_.try_emplace(e.k);
        if (fresh)
          added.push_back(&e.k);
        slots.push_back(&i->second); // reserved: cannot throw
      }
    } catch (...) {
      for (auto* k : added)
        map_.erase(*k);
      throw;
    }
    for (size_t i = 0; i < slots.size(); ++i)
      *slots[i] = std::move(values[i]);
    return caf::none;
  }

  caf::expected<bool> erase(const key& k) override {
    std::lock_guard<std::mutex> guard{mtx_};
    return map_.erase(k) > 0;
  }

  caf::error
  scan(const std::function<bool(const key&, std::string_view)>& fn) override {
    // RocksDB's order: by encoded key (integers numerically, then strings
    // bytewise), so both stores list alike.
    std::vector<std::pair<std::string, std::pair<key, std::string>>> copy;
    {
      std::lock_guard<std::mutex> guard{mtx_};
      copy.reserve(map_.size());
      for (const auto& [k, bytes] : map_)
        copy.emplace_back(detail::encode_state_key(k),
                          std::make_pair(k, bytes));
    }
    std::sort(copy.begin(), copy.end(), [](const auto& x, const auto& y) {
      return x.first < y.first;
    });
    for (const auto& [encoded, entry] : copy)
      if (!fn(entry.first, entry.second))
        break;
    return caf::none;
  }

  std::string describe() const override {
    return "memory state store";
  }

private:
  mutable std::mutex mtx_;
  std::unordered_map<key, std::string, key_hasher> map_;
};

} // namespace

std::unique_ptr<state_store> make_memory_state_store() {
  return std::make_unique<memory_state_store>();
}

} // namespace keylane
