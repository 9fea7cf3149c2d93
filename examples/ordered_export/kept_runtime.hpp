// SPDX-License-Identifier: Apache-2.0
#pragma once

// The runtime of the mode that ran last, kept so that it can outlive the
// run (--serve) and be reached from the signal thread (SIGHUP).

#include <functional>
#include <memory>
#include <mutex>

#include <keylane/runtime.hpp>

#include "modes.hpp"
#include "workload.hpp"

namespace ordered_export {

/// The runtime type of every mode.
using export_runtime = keylane::runtime<export_item, export_row>;

/// Holds at most one runtime and the mode it runs.
///
/// Thread-safety: every member may be called from any thread; `stop`
/// waits for a `visit` in progress, and `visit` after `stop` finds
/// nothing, so the signal thread never reaches a stopping runtime.
class kept_runtime {
public:
  kept_runtime() = default;
  kept_runtime(const kept_runtime&) = delete;
  kept_runtime& operator=(const kept_runtime&) = delete;

  /// Stops what is still kept.
  ~kept_runtime() { stop(); }

  /// Keeps `rt`, which runs `m`, stopping the one kept before.
  void keep(std::unique_ptr<export_runtime> rt, mode m);

  /// Calls `f` with the kept runtime and its mode, under the lock; false if
  /// none is kept.
  bool visit(const std::function<void(export_runtime&, const mode&)>& f);

  /// Stops the kept runtime, if any.
  void stop();

private:
  std::mutex mtx_;
  std::unique_ptr<export_runtime> rt_;
  mode mode_;
};

} // namespace ordered_export
