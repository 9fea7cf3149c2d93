// SPDX-License-Identifier: Apache-2.0
// The state service's cache: loads, and the records it keeps in memory
// (staged ones until written, written ones while they fit). Its writer:
// state_service.cpp.

#include "keylane/detail/state_service.hpp"

#include <algorithm>
#include <utility>

namespace keylane::detail {

using steady = std::chrono::steady_clock;

caf::expected<std::optional<std::string>>
state_service::load(const key& k) {
  if (!store_)
    return std::optional<std::string>{};
  auto t0 = steady::now();
  {
    std::lock_guard<std::mutex> guard{mtx_};
    if (auto i = cache_.find(k); i != cache_.end()) {
      std::optional<std::string> out{i->second.bytes};
      count_load(steady::now() - t0);
      return out;
    }
  }
  auto got = store_->read(k);
  count_load(steady::now() - t0);
  if (!got) {
    load_failures_.fetch_add(1, std::memory_order_relaxed);
  } else if (*got && cache_limit_ > 0) {
    std::lock_guard<std::mutex> guard{mtx_};
    if (cache_.count(k) == 0) // else staged meanwhile: that one is newer
      put(k, **got, true);
  }
  return got;
}

void state_service::put(const key& k, std::string bytes, bool written) {
  auto gen = ++gen_;
  auto [i, fresh] = cache_.try_emplace(k, cached{std::string{}, gen, written});
  auto& c = i->second;
  if (!fresh) {
    cached_bytes_ -= c.bytes.size();
    if (!c.written)
      --unwritten_;
  }
  cached_bytes_ += bytes.size();
  c.bytes = std::move(bytes);
  c.gen = gen;
  c.written = written;
  if (written) {
    written_order_.emplace_back(k, gen);
    evict();
  } else {
    ++unwritten_;
  }
}

void state_service::evict() {
  while (cached_bytes_ > cache_limit_ && !written_order_.empty()) {
    auto [k, gen] = std::move(written_order_.front());
    written_order_.pop_front();
    auto i = cache_.find(k);
    if (i != cache_.end() && i->second.written && i->second.gen == gen) {
      cached_bytes_ -= i->second.bytes.size();
      cache_.erase(i);
    }
  }
  // A key written again leaves its older entry behind: drop those before
  // they outnumber the cache, or a cache that never fills grows this list.
  if (written_order_.size() > 2 * cache_.size() + 1024) {
    std::deque<std::pair<key, uint64_t>> live;
    for (auto& [k, gen] : written_order_) {
      auto i = cache_.find(k);
      if (i != cache_.end() && i->second.written && i->second.gen == gen)
        live.emplace_back(std::move(k), gen);
    }
    written_order_.swap(live);
  }
}

void state_service::count_load(std::chrono::nanoseconds d) noexcept {
  loads_.fetch_add(1, std::memory_order_relaxed);
  auto us = static_cast<uint64_t>(std::max<int64_t>(0, d.count()) / 1000);
  size_t i = 0;
  while (i < latency_histogram::bounds_us.size()
         && us > latency_histogram::bounds_us[i])
    ++i;
  load_counts_[i].fetch_add(1, std::memory_order_relaxed);
  load_ns_.fetch_add(static_cast<uint64_t>(std::max<int64_t>(0, d.count())),
                     std::memory_order_relaxed);
}

} // namespace keylane::detail
