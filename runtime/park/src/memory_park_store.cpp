// SPDX-License-Identifier: Apache-2.0
// The park store in memory: records per key in a deque, ids from a counter.

#include <algorithm>
#include <cstdint>
#include <deque>
#include <iterator>
#include <memory>
#include <mutex>
#include <tuple>
#include <unordered_map>
#include <utility>
#include <vector>

#include "keylane/park_store.hpp"

namespace keylane {

namespace {

/// Thread-safe: one mutex guards every call, so each call is atomic and
/// calls take effect in the order they acquire it. Ids come from one
/// counter and are never reused, also after a key's records are removed.
class memory_park_store final : public park_store {
public:
  caf::expected<std::vector<uint64_t>>
  append(std::vector<parked_record> records) override {
    std::vector<uint64_t> ids;
    ids.reserve(records.size());
    std::vector<std::deque<parked_record>*> touched;
    touched.reserve(records.size());
    std::lock_guard<std::mutex> guard{mtx_};
    // Strong guarantee: on an exception (allocation) take back what this
    // call added, so an append is all or nothing here as in the durable store.
    try {
      for (auto& r : records) {
        auto& lane = by_key_[r.k];
        auto id = next_id_ + ids.size();
        r.id = id;
        lane.push_back(std::move(r));
        touched.push_back(&lane); // reserved: cannot throw
        ids.push_back(id);
      }
    } catch (...) {
      for (auto i = touched.size(); i > 0; --i)
        touched[i - 1]->pop_back();
      for (auto it = by_key_.begin(); it != by_key_.end();)
        it = it->second.empty() ? by_key_.erase(it) : std::next(it);
      throw;
    }
    next_id_ += ids.size();
    return ids;
  }

  caf::error restamp(const std::vector<parked_record>& records) override {
    std::lock_guard<std::mutex> guard{mtx_};
    for (const auto& r : records) {
      auto i = by_key_.find(r.k);
      if (i == by_key_.end())
        continue;
      auto& lane = i->second;
      auto at = std::lower_bound(lane.begin(), lane.end(), r.id,
                                 [](const auto& x, uint64_t id) {
                                   return x.id < id;
                                 });
      if (at == lane.end() || at->id != r.id)
        continue;
      at->seq = r.seq;
      at->reason = r.reason;
      at->attempts = r.attempts;
      at->parked_at = r.parked_at;
    }
    return caf::none;
  }

  caf::expected<std::vector<parked_key>> keys() override {
    // Each summary with its first record's id, the tie-breaker of the order.
    std::vector<std::pair<parked_key, uint64_t>> found;
    {
      std::lock_guard<std::mutex> guard{mtx_};
      found.reserve(by_key_.size());
      for (const auto& [k, lane] : by_key_) {
        const auto& first = lane.front(); // empty lanes are erased
        found.emplace_back(parked_key{k, lane.size(), first.reason,
                                      first.parked_at},
                           first.id);
      }
    }
    // The same order as the SQLite store: first parked time, then first id.
    std::sort(found.begin(), found.end(), [](const auto& x, const auto& y) {
      return std::tie(x.first.parked_at, x.second)
             < std::tie(y.first.parked_at, y.second);
    });
    std::vector<parked_key> out;
    out.reserve(found.size());
    for (auto& f : found)
      out.push_back(std::move(f.first));
    return out;
  }

  caf::expected<std::vector<parked_record>> records(const key& k) override {
    std::lock_guard<std::mutex> guard{mtx_};
    auto i = by_key_.find(k);
    if (i == by_key_.end())
      return std::vector<parked_record>{};
    return std::vector<parked_record>(i->second.begin(), i->second.end());
  }

  caf::expected<bool> is_parked(const key& k) override {
    std::lock_guard<std::mutex> guard{mtx_};
    return by_key_.count(k) > 0;
  }

  caf::expected<uint64_t> remove_through(const key& k,
                                         uint64_t up_to_id) override {
    std::lock_guard<std::mutex> guard{mtx_};
    auto i = by_key_.find(k);
    if (i == by_key_.end())
      return uint64_t{0};
    auto& lane = i->second;
    // A key's ids increase along its deque, so the records to drop lead it.
    auto end = std::find_if(lane.begin(), lane.end(), [=](const auto& r) {
      return r.id > up_to_id;
    });
    auto n = static_cast<uint64_t>(std::distance(lane.begin(), end));
    lane.erase(lane.begin(), end);
    if (lane.empty())
      by_key_.erase(i);
    return n;
  }

  caf::expected<uint64_t> discard(const key& k) override {
    std::lock_guard<std::mutex> guard{mtx_};
    auto i = by_key_.find(k);
    if (i == by_key_.end())
      return uint64_t{0};
    uint64_t n = i->second.size();
    by_key_.erase(i);
    return n;
  }

private:
  std::mutex mtx_;
  std::unordered_map<key, std::deque<parked_record>, key_hasher> by_key_;
  uint64_t next_id_ = 1;
};

} // namespace

std::unique_ptr<park_store> make_memory_park_store() {
  return std::make_unique<memory_park_store>();
}

} // namespace keylane
