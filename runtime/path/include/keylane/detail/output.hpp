// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

#include "keylane/detail/event_base.hpp"
#include "keylane/detail/ingress.hpp"
#include "keylane/detail/logger.hpp"
#include "keylane/detail/waiter.hpp"

namespace keylane::detail {

struct counters;
struct outcome_tally;
class live_settings;

/// What counting an event reads of it, taken when it finishes (its lines
/// are in cache then): counting a round's events from their notes at emit
/// reads one compact array, where reading the events again missed a line
/// of each with thousands of keys.
struct outcome_note {
  clock::time_point submitted;
  uint32_t attempts;
  outcome status;

  [[nodiscard]] static outcome_note of(const event_base& ev) noexcept {
    return outcome_note{ev.submitted, ev.attempts, ev.status};
  }
};

/// Where finished events leave: the output queue, the consumer thread that
/// runs the user's callback (or `pull` calls in pull mode), and the window
/// credit each delivery gives back to ingress. With `on_sink`, the thread
/// that emits runs the callback itself: no queue hand-off, no consumer
/// thread. With `inline_when_idle`, it does so while the consumer thread
/// sleeps, for a bounded time, and leaves the rest to the consumer.
///
/// Its producers are the sink (`order = "global"`, events already counted
/// and in order) and, for the other orders, the shards and the supervisor
/// themselves (`emit` with `tally`): no sink hop. Batches leave in the
/// order their `emit` calls took the queue's lock, whichever threads made
/// them, so a key's outputs keep their order across its activations (a
/// lane emits before it retires, and the next lane of its key starts only
/// after that). The callback runs on one thread at a time: the consumer
/// thread, or, with `on_sink`, whichever emitting thread found no other
/// delivering (the others leave their batches to it).
///
/// Thread-safety: `emit` from any threads at once; `try_pull` / `pull`
/// from any threads at once. Counts are exact: an event is counted
/// delivered before its credit can wake a waiter, and counted (`tally`)
/// before the application can see it.
class output {
public:
  /// Called for each delivered event; empty for pull mode.
  using output_fn = std::function<void(event_base&)>;

  output(output_fn fn, bool on_sink, bool inline_when_idle, ingress& in,
         waiter& w, logger& log, counters& pub, const live_settings& live);
  ~output();

  /// Starts the consumer thread (callback mode); `mark` runs on it first.
  void start(std::function<void()> mark);

  /// Hands events to the application, in the order given; with `tally`
  /// (the calling actor's own block), counts their outcomes (and latency)
  /// there first, as the sink does for its own. Takes ownership of the
  /// events.
  void emit(event_base** evs, size_t n, outcome_tally* tally = nullptr);

  /// As `emit`, from a vector it leaves empty.
  void emit(std::vector<event_ptr>& evs, outcome_tally* tally);

  /// As `emit` with `tally`, counting from `notes` (one per event, in the
  /// same order); leaves both vectors empty.
  void emit(std::vector<event_ptr>& evs, std::vector<outcome_note>& notes,
            outcome_tally& tally);

  /// Takes one delivered event without waiting (pull mode).
  [[nodiscard]] bool try_pull(event_ptr& out);

  /// Takes one delivered event, waiting up to `timeout` (pull mode), or
  /// none at once on an empty queue once `end_pulls` was called.
  [[nodiscard]] bool pull(event_ptr& out, std::chrono::nanoseconds timeout);

  /// The stop has begun: `pull` takes what is queued and no longer waits
  /// for more, which may never come (the owner's `stop` lists them).
  void end_pulls();

  /// Gives back the credit of `n` accepted events that can never be
  /// delivered; they count as lost, not delivered.
  void forget(size_t n);

  /// Ends the consumer thread after what was emitted (every producer has
  /// ended) and returns every event still queued.
  std::vector<event_ptr> finish();

  /// There is a callback (not pull mode).
  [[nodiscard]] bool has_callback() const noexcept { return bool{fn_}; }

  /// Events delivered so far (callback returned, or pulled).
  [[nodiscard]] uint64_t delivered() const noexcept {
    return delivered_.load(std::memory_order_acquire);
  }

  /// Events that can never be delivered (see `forget`).
  [[nodiscard]] uint64_t lost() const noexcept {
    return lost_.load(std::memory_order_acquire);
  }

private:
  void count(event_base** evs, size_t n, outcome_tally& t); // its writer
  void count(const outcome_note* notes, size_t n, outcome_tally& t);
  template <class Note>
  void count_each(size_t n, outcome_tally& t, Note&& note_at);
  void consume_loop();
  void run(event_base** evs, size_t n);
  void emit_inline(event_base** evs, size_t n);
  size_t run_until(event_base** evs, size_t n, clock::time_point until);
  void call(event_base* ev);
  void deliver(size_t n);
  bool take_one(event_ptr& out); // under mtx_

  output_fn fn_;
  bool on_sink_; // the callback runs in `emit`
  // The callback runs in `emit` while the consumer sleeps, for a while.
  bool inline_when_idle_;
  ingress& ingress_;
  waiter& waiter_;
  logger& log_;
  counters& pub_;
  const live_settings& live_;
  // The queue: `queued_` from `head_` on, in emit order. One lock per
  // batch, where a lock-free queue kept order per producer only.
  std::mutex mtx_;
  std::condition_variable ready_;
  std::vector<event_base*> queued_;
  std::vector<event_base*> spare_; // on_sink: the batch being delivered
  size_t head_ = 0;
  bool consumer_asleep_ = false; // the consumer waits on `ready_`
  bool delivering_ = false; // on_sink, inline: an emitter runs the callback
  bool stop_ = false;
  size_t pullers_ = 0; // pull calls waiting on `ready_`
  bool pulls_ended_ = false; // see end_pulls
  alignas(64) std::atomic<bool> nonempty_{false}; // spun on before sleeping
  alignas(64) std::atomic<uint64_t> delivered_{0};
  std::atomic<uint64_t> lost_{0};
  std::thread consumer_;
};

} // namespace keylane::detail
