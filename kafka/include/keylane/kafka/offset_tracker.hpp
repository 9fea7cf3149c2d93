// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>

namespace keylane::kafka {

/// The offsets of one partition that were taken and not yet committable,
/// and the offset that may be committed: the lowest one not finished, or
/// one past the last taken when all finished. Offsets are taken in
/// increasing order (gaps allowed: compaction, transaction markers) and
/// finish in any order.
///
/// An offset finishes when its output was handled (`finish`) and, if it was
/// told to wait for its keyed state (`await_state`), once that state is
/// durable too (`state_durable`); the two may come in either order.
///
/// Not thread-safe: the source guards each tracker with its own mutex.
class offset_tracker {
public:
  /// Records that `offset` was handed to the runtime.
  void take(int64_t offset);

  /// Forgets the offset of the last `take` (the runtime refused it); once
  /// per `take`.
  void untake();

  /// Marks `offset`'s output handled. True if that finished it; false if it
  /// was not outstanding, its output was handled already, or it still
  /// waits for `state_durable`.
  bool finish(int64_t offset);

  /// Makes the unfinished `offset` wait, besides its output, for
  /// `state_durable(offset)`. Call it before `finish(offset)`; false (and
  /// nothing changes) if it was not outstanding or is finished.
  bool await_state(int64_t offset);

  /// Marks `offset`'s keyed state durable. True if that finished it; false
  /// if it was not waiting for its state, or still waits for `finish`.
  bool state_durable(int64_t offset);

  /// The offset to commit: every offset below it is finished; -1 when
  /// nothing was taken yet.
  [[nodiscard]] int64_t committable() const noexcept;

  /// Offsets taken and not yet committable (finished ones behind an
  /// unfinished one included).
  [[nodiscard]] size_t outstanding() const noexcept { return open_.size(); }

  /// Offsets taken and not finished.
  [[nodiscard]] size_t unfinished() const noexcept { return unfinished_; }

  /// Unfinished offsets whose output was handled and that wait for their
  /// keyed state only.
  [[nodiscard]] size_t awaiting_state() const noexcept {
    return awaiting_state_;
  }

  /// One past the last offset taken (-1 before the first).
  [[nodiscard]] int64_t next() const noexcept { return next_; }

private:
  struct slot {
    int64_t offset;
    bool done;
    bool output = false; // its output was handled
    bool state = false;  // it waits for its keyed state
  };
  slot* find(int64_t offset);
  void done(slot& s);
  std::deque<slot> open_;
  size_t unfinished_ = 0;
  size_t awaiting_state_ = 0;
  int64_t next_ = -1;
  int64_t before_ = -1; // next_ before the last take, for untake
};

} // namespace keylane::kafka
