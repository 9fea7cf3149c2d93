#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <thread>
#include <vector>

#include "keylane/detail/event_base.hpp"
#include "keylane/detail/ingress.hpp"
#include "keylane/detail/logger.hpp"
#include "keylane/detail/mpmc_queue.hpp"
#include "keylane/detail/waiter.hpp"

namespace keylane::detail {

/// Where finished events leave: the output queue the sink fills, the
/// consumer thread that runs the user's callback (or `pull` calls in pull
/// mode), and the window credit each delivery gives back to ingress. With
/// `on_sink`, `emit` runs the callback itself, on the sink's thread: no
/// queue, no consumer thread.
///
/// Thread-safety: `emit` is called by the sink alone (one producer token:
/// moodycamel keeps FIFO order per token while the sink actor may run on a
/// different thread each time); the consumer side is the consumer thread,
/// or any threads calling `try_pull` / `pull` at once. Counts are exact:
/// an event is counted delivered before its credit can wake a waiter.
class output {
public:
  /// Called on the consumer thread for each delivered event; empty for
  /// pull mode.
  using output_fn = std::function<void(event_base&)>;

  output(output_fn fn, bool on_sink, ingress& in, waiter& w, logger& log);
  ~output();

  /// Starts the consumer thread (callback mode); `mark` runs on it first.
  void start(std::function<void()> mark);

  /// Hands events to the application, in the order given (the sink).
  void emit(event_base** evs, size_t n);

  /// Takes one delivered event without waiting (pull mode).
  [[nodiscard]] bool try_pull(event_ptr& out);

  /// Takes one delivered event, waiting up to `timeout` (pull mode).
  [[nodiscard]] bool pull(event_ptr& out, std::chrono::nanoseconds timeout);

  /// Gives back the credit of `n` accepted events that can never be
  /// delivered; they count as lost, not delivered.
  void forget(size_t n);

  /// Ends the consumer thread after what the sink emitted (the sink has
  /// ended) and returns every event still in the queue.
  std::vector<event_ptr> finish();

  /// Events delivered so far (callback returned, or pulled).
  [[nodiscard]] uint64_t delivered() const noexcept {
    return delivered_.load(std::memory_order_acquire);
  }

  /// Events that can never be delivered (see `forget`).
  [[nodiscard]] uint64_t lost() const noexcept {
    return lost_.load(std::memory_order_acquire);
  }

private:
  void consume_loop();
  void run(event_base** evs, size_t n);
  void deliver(size_t n);

  output_fn fn_;
  bool on_sink_; // the callback runs in `emit`
  ingress& ingress_;
  waiter& waiter_;
  logger& log_;
  short_spin_queue<event_base*> queue_;
  std::unique_ptr<producer_token> token_;
  alignas(64) std::atomic<uint64_t> delivered_{0};
  std::atomic<uint64_t> lost_{0};
  std::thread consumer_;
  std::atomic<bool> stop_{false};
};

} // namespace keylane::detail
