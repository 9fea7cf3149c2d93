// SPDX-License-Identifier: Apache-2.0
#pragma once

// The baselines' queue: a mutex and a condition variable around a deque.

#include <condition_variable>
#include <deque>
#include <mutex>
#include <optional>
#include <utility>

namespace ledger {

/// A closable FIFO queue.
///
/// Thread-safety: any number of threads may `push`, `pop` and `close` at
/// once. Items leave in the order they were pushed (each `pop` takes the
/// oldest), but with several consumers nothing orders what they do with
/// them afterwards — which is the shared queue's problem.
template <class T>
class work_queue {
public:
  /// Appends `x`.
  void push(T x) {
    {
      std::lock_guard<std::mutex> guard{mtx_};
      items_.push_back(std::move(x));
    }
    cv_.notify_one();
  }

  /// Wakes every consumer once the queue is empty: no more items come.
  void close() {
    {
      std::lock_guard<std::mutex> guard{mtx_};
      closed_ = true;
    }
    cv_.notify_all();
  }

  /// Takes the oldest item, waiting for one; nothing once closed and empty.
  [[nodiscard]] std::optional<T> pop() {
    std::unique_lock<std::mutex> lock{mtx_};
    cv_.wait(lock, [this] { return !items_.empty() || closed_; });
    if (items_.empty())
      return std::nullopt;
    auto x = std::move(items_.front());
    items_.pop_front();
    return x;
  }

private:
  std::mutex mtx_;
  std::condition_variable cv_;
  std::deque<T> items_;
  bool closed_ = false;
};

} // namespace ledger
