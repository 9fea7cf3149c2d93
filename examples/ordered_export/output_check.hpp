// SPDX-License-Identifier: Apache-2.0
#pragma once

// What the consumer sees of one mode's output: when results came, whether
// they came in the order the mode promises, and whether every row came
// exactly once.

#include <chrono>
#include <cstdint>
#include <vector>

#include <keylane/config.hpp>
#include <keylane/outcome.hpp>

#include "modes.hpp"
#include "workload.hpp"

namespace ordered_export {

/// Checks one mode's outputs as they arrive.
///
/// Thread-safety: `start` is called before the first submit, `seen` on the
/// runtime's consumer thread only (one call at a time, in output order),
/// and the getters after `drain` returned.
class output_check {
public:
  using clock = std::chrono::steady_clock;

  /// Expects `items` rows in `order`, keyed as `keys_by`.
  output_check(uint64_t items, keylane::order_mode order, keying keys_by);

  /// Marks the start of the submits; times are measured from here.
  void start() noexcept { t0_ = clock::now(); }

  /// Counts one output: the event's sequence number, its row and outcome.
  void seen(uint64_t seq, const export_item& item, keylane::outcome status);

  /// Start to first output, and to the last.
  [[nodiscard]] double first_s() const noexcept { return seconds(first_); }
  [[nodiscard]] double last_s() const noexcept { return seconds(last_); }

  /// Outputs that broke the promised order: global, a sequence number not
  /// above the one before; per key, a row not after its key's previous one.
  [[nodiscard]] uint64_t violations() const noexcept { return violations_; }

  /// Outputs that were tombstones (failed, skipped or parked) rather than
  /// results.
  [[nodiscard]] uint64_t tombstones() const noexcept { return tombstones_; }

  /// Rows that came more than once, and rows that never came.
  [[nodiscard]] uint64_t duplicates() const noexcept { return duplicates_; }
  [[nodiscard]] uint64_t missing() const noexcept;

  /// Outputs counted.
  [[nodiscard]] uint64_t outputs() const noexcept { return outputs_; }

private:
  [[nodiscard]] double seconds(clock::time_point t) const noexcept;

  keylane::order_mode order_;
  keying keys_by_;
  clock::time_point t0_;
  clock::time_point first_;
  clock::time_point last_;
  std::vector<uint8_t> seen_;
  // Global: the last sequence number; per key: the last row of each key,
  // plus one (0: none yet).
  uint64_t last_seq_ = 0;
  bool any_ = false;
  std::vector<uint64_t> last_row_;
  uint64_t violations_ = 0;
  uint64_t tombstones_ = 0;
  uint64_t duplicates_ = 0;
  uint64_t outputs_ = 0;
};

} // namespace ordered_export
