// SPDX-License-Identifier: Apache-2.0
#pragma once

// The pipeline's input: items for accounts, each with the time its fetch
// (stage 1) and conversion (stage 2) take, and an amount for the running
// total.

#include <chrono>
#include <cstdint>
#include <vector>

namespace pipeline_example {

/// One item as submitted.
struct item {
  uint64_t index = 0;
  uint32_t account = 0;
  int64_t amount = 0;
  std::chrono::microseconds fetch{0};
  std::chrono::microseconds convert{0};
};

/// An item after stage 1: the fetched amount in cents.
struct fetched {
  item in;
  int64_t cents = 0;
};

/// What stage 2 produces: the converted amount, or the account's running
/// total after the item (the stateful modes).
struct priced {
  uint64_t index = 0;
  uint32_t account = 0;
  int64_t value = 0;
};

/// How long the calls take.
struct timing {
  std::chrono::microseconds fetch{10'000};
  std::chrono::microseconds straggler{200'000};
  std::chrono::microseconds convert{10'000};
};

/// `n` items over `accounts` accounts; exactly 1 % (at least one) of
/// them, chosen by `seed`, take `t.straggler` to fetch.
[[nodiscard]] std::vector<item> make_items(uint64_t n, uint32_t accounts,
                                           uint64_t seed, const timing& t);

/// The stage-1 value of `x`, as the fetch handler computes it.
[[nodiscard]] inline int64_t cents_of(const item& x) { return x.amount * 100; }

/// The stage-2 value of a fetched item, as the convert handler computes it.
[[nodiscard]] inline int64_t converted(const fetched& x) {
  return x.cents * 11 / 10;
}

/// The running total per account after each item, computed in one loop in
/// submission order: what the stateful modes must match.
[[nodiscard]] std::vector<int64_t> sequential_totals(
  const std::vector<item>& items);

} // namespace pipeline_example
