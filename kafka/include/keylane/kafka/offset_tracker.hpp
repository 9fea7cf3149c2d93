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
/// Not thread-safe: the source guards each tracker with its own mutex.
class offset_tracker {
public:
  /// Records that `offset` was handed to the runtime.
  void take(int64_t offset);

  /// Forgets the offset of the last `take` (the runtime refused it); once
  /// per `take`.
  void untake();

  /// Marks `offset` finished; false if it was not outstanding.
  bool finish(int64_t offset);

  /// The offset to commit: every offset below it is finished; -1 when
  /// nothing was taken yet.
  [[nodiscard]] int64_t committable() const noexcept;

  /// Offsets taken and not yet committable (finished ones behind an
  /// unfinished one included).
  [[nodiscard]] size_t outstanding() const noexcept { return open_.size(); }

  /// Offsets taken and not finished.
  [[nodiscard]] size_t unfinished() const noexcept { return unfinished_; }

  /// One past the last offset taken (-1 before the first).
  [[nodiscard]] int64_t next() const noexcept { return next_; }

private:
  struct slot {
    int64_t offset;
    bool done;
  };
  std::deque<slot> open_;
  size_t unfinished_ = 0;
  int64_t next_ = -1;
  int64_t before_ = -1; // next_ before the last take, for untake
};

} // namespace keylane::kafka
