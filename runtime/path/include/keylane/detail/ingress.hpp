// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <atomic>
#include <cstdint>
#include <vector>

#include "keylane/config.hpp"
#include "keylane/detail/event_base.hpp"
#include "keylane/detail/waiter.hpp"
#include "keylane/errc.hpp"

namespace keylane::detail {

class inboxes;
class key_table;

/// Where accepted events enter: the admission window (credit taken per
/// event, given back once its result is delivered), sequence numbers, and
/// the hand-off of each event to the key table, which routes it (see
/// `key_table::admit`).
///
/// Thread-safety: `submit` and the credit calls may run on any thread at
/// once. A key's sequence numbers are taken under its stripe lock, inside
/// the table's admission, so a key's events enter every queue in
/// sequence-number order; different keys' events interleave in no defined
/// order.
class ingress {
public:
  /// Builds an event for `submit`; `ctx` is the caller's state.
  using make_fn = event_ptr (*)(void* ctx);

  /// What `submit` did: `code == errc::none` and a sequence number, or an
  /// error and nothing taken.
  struct admission {
    errc code;
    uint64_t seq;
  };

  ingress(size_t window, key_table& keys, inboxes& boxes, waiter& w);

  /// Takes a window credit and a backlog slot for `k` — waiting for them
  /// if `may_wait`, else refusing — then builds the event with `make` and
  /// hands it to the key table under `k`'s stripe lock. `make` runs only if
  /// the event is accepted; if it throws, nothing was taken and the
  /// exception propagates. `force` (a message between keys, bounded by
  /// `detail::messaging` instead) takes the credit and the backlog slot
  /// even past their limits, and never travels by value. `past_cap` (an
  /// ask: its sender holds a slot until answered) starts `k`'s lane even
  /// when the cap is full or keys wait, a waiting `k` included, so askers
  /// that fill the cap never wait for their own targets.
  admission submit(const key& k, make_fn make, void* ctx, bool may_wait,
                   bool force = false, bool past_cap = false);

  /// Refuses new events from now on and returns once every `submit` in
  /// progress has enqueued or given up.
  void close();

  /// Gives replayed events new sequence numbers and window credit (under
  /// their key's lock, so newer events of their key get higher ones).
  void accept_replayed(std::vector<event_ptr>& evs);

  /// Returns the credit of `n` delivered (or forgotten) events; wakes
  /// blocked producers if that made room.
  void credit(size_t n);

  /// Sets the window; blocked producers go on at once if it grew.
  void resize_window(size_t n);

  /// Stops admitting (a zero window) or admits again without a bound.
  void hold_admission(bool hold) { resize_window(hold ? 0 : unbounded); }

  /// The window in force.
  [[nodiscard]] size_t window() const noexcept {
    return window_.load(std::memory_order_relaxed);
  }

  /// Events accepted so far (the next sequence number).
  [[nodiscard]] uint64_t accepted() const noexcept {
    return next_seq_.load(std::memory_order_acquire);
  }

  /// `submit` calls refused so far.
  [[nodiscard]] uint64_t rejected() const noexcept {
    return rejected_.load(std::memory_order_relaxed);
  }

private:
  bool take_credit();

  // Producers bump these on every submit: each on its own cache line.
  alignas(64) std::atomic<uint64_t> next_seq_{0};
  alignas(64) std::atomic<uint64_t> in_flight_{0};
  alignas(64) std::atomic<size_t> window_;
  alignas(64) std::atomic<bool> closed_{false};
  // Submits in progress: `close` waits for them to enqueue or give up.
  alignas(64) std::atomic<int> inside_submit_{0};
  std::atomic<uint64_t> rejected_{0};
  waiter& waiter_;
  key_table& keys_;
  inboxes& boxes_;
};

} // namespace keylane::detail
