// SPDX-License-Identifier: Apache-2.0
#pragma once

// The stages' handlers. Fetch and convert are asynchronous calls finished
// from a lane timer (`run_later`), so no worker thread sleeps; the running
// total is a stateful stage whose per-account state outlives its lanes.

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>

#include <keylane/handler.hpp>

#include "workload.hpp"

namespace pipeline_example {

/// Stage 1: fetches an item's amount (its `fetch` time).
class fetch_handler : public keylane::handler<item, fetched> {
public:
  void on_event(item& x, keylane::completion<fetched> done) override;
};

/// Stage 2: converts a fetched amount (its `convert` time).
class convert_handler : public keylane::handler<fetched, priced> {
public:
  void on_event(fetched& x, keylane::completion<priced> done) override;
};

/// Where running totals live between an account's lanes (a stand-in for
/// a database).
///
/// Thread-safety: every member may be called from any thread.
class total_store {
public:
  [[nodiscard]] int64_t load(uint32_t account);
  void save(uint32_t account, int64_t total);

private:
  std::mutex mtx_;
  std::map<uint32_t, int64_t> totals_;
};

/// Stage 2 of the stateful modes: the account's running total after the
/// item. Loads the total when the account's lane starts and saves it when
/// the lane retires; correct only if the account's items arrive in
/// submission order.
class total_handler : public keylane::handler<fetched, priced> {
public:
  explicit total_handler(std::shared_ptr<total_store> store)
    : store_(std::move(store)) {}

  void on_activate(const keylane::key& k) override;
  void on_retire(const keylane::key& k) override;
  void on_event(fetched& x, keylane::completion<priced> done) override;

private:
  std::shared_ptr<total_store> store_;
  int64_t total_ = 0;
};

} // namespace pipeline_example
