// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <mutex>
#include <shared_mutex>
#include <utility>

namespace keylane::detail {

/// Lets readers that may outlive an object (a metrics collectable the
/// host's Prometheus registry keeps as long as it likes) read it until its
/// owner closes the gate, and never after.
///
/// Thread-safety: `read` may run on any number of threads at once; `close`
/// waits for the reads in progress, and every `read` that starts after it
/// runs nothing.
class read_gate {
public:
  /// Calls `fn()` and returns true, or returns false once closed.
  template <class F>
  bool read(F&& fn) const {
    std::shared_lock<std::shared_mutex> guard{mtx_};
    if (closed_)
      return false;
    std::forward<F>(fn)();
    return true;
  }

  /// Ends reading; returns once no read runs. Idempotent.
  void close() {
    std::unique_lock<std::shared_mutex> guard{mtx_};
    closed_ = true;
  }

private:
  mutable std::shared_mutex mtx_;
  bool closed_ = false;
};

} // namespace keylane::detail
