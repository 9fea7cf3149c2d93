// SPDX-License-Identifier: Apache-2.0
#pragma once

// The export's handler: each row is an asynchronous call that finishes
// from a lane timer (`run_later`), so no worker thread sleeps, and the time
// each call holds its lane is added up to give the worker idle share.

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>

#include <keylane/handler.hpp>

#include "workload.hpp"

namespace ordered_export {

/// The handler name the program registers and its config must select.
inline constexpr const char* handler_name = "ordered_export";

/// Adds up how long handler calls held their lanes.
///
/// Thread-safety: every member may be called from any thread.
class busy_meter {
public:
  using clock = std::chrono::steady_clock;

  /// Caps each call at `attempt_timeout` (zero: no cap): the lane gives up
  /// on a call then, and a late completion holds nothing.
  explicit busy_meter(std::chrono::nanoseconds attempt_timeout) noexcept
    : cap_(attempt_timeout) {}

  /// The cap, zero for none.
  [[nodiscard]] std::chrono::nanoseconds cap() const noexcept { return cap_; }

  /// Counts a call as started; `end` counts it as over.
  void begin();

  /// Counts the call that started at `from` as over at `to` (capped).
  void end(clock::time_point from, clock::time_point to);

  /// Waits until every started call is over, at most `timeout`; false if
  /// some still run.
  [[nodiscard]] bool settle(std::chrono::nanoseconds timeout);

  /// The busy time counted so far.
  [[nodiscard]] std::chrono::nanoseconds busy();

private:
  std::chrono::nanoseconds cap_;
  std::mutex mtx_;
  std::condition_variable cv_;
  uint64_t open_ = 0;
  std::chrono::nanoseconds busy_{0};
};

/// Exports one row: waits the row's `work` on a lane timer, then finishes
/// with its line.
class export_handler : public keylane::handler<export_item, export_row> {
public:
  explicit export_handler(std::shared_ptr<busy_meter> busy)
    : busy_(std::move(busy)) {}

  void on_event(export_item& item,
                keylane::completion<export_row> done) override;

private:
  std::shared_ptr<busy_meter> busy_;
};

} // namespace ordered_export
