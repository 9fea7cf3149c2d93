// SPDX-License-Identifier: Apache-2.0
#pragma once

// The export workload: rows to export, each costing a simulated
// asynchronous call, 1 % of them stragglers. Deterministic from a seed, so
// every mode exports identical rows with the same stragglers.

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include <caf/meta/type_name.hpp>

namespace ordered_export {

/// Customers the rows belong to (the keys of the per-key mode).
inline constexpr uint32_t customers = 100;

/// One row to export.
struct export_item {
  /// Position in the export, from 0: submission order.
  uint64_t index = 0;
  /// The customer, `index % customers`.
  uint32_t customer = 0;
  /// Amount in cents, for the exported line.
  int64_t amount = 0;
  /// How long the simulated asynchronous call for this row takes.
  std::chrono::microseconds work{0};
};

/// The exported line of one row.
struct export_row {
  /// The row's `export_item::index`.
  uint64_t index = 0;
  /// "index,customer,amount", as a CSV export would write it.
  std::string line;
};

// The inspect overloads sit next to the types on purpose: spilling results
// (sink.spill_path) writes them with keylane's codec, and every file that
// instantiates a runtime of these types must see the same codec.

/// Visits the fields of `x` for CAF's serializers (keylane's codec).
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, export_item& x) {
  return f(caf::meta::type_name("export_item"), x.index, x.customer, x.amount,
           x.work);
}

/// Visits the fields of `x` for CAF's serializers (keylane's codec).
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, export_row& x) {
  return f(caf::meta::type_name("export_row"), x.index, x.line);
}

/// The shape of a workload.
struct workload_spec {
  /// Seed of every random choice (which rows straggle, the amounts).
  uint64_t seed = 7;
  /// Rows to export.
  uint64_t items = 1000;
  /// The call of an ordinary row, and of a straggler.
  std::chrono::microseconds fast{10000};
  std::chrono::microseconds slow{500000};
};

/// The rows of `spec`: exactly 1 % of them (rounded, at least one) take
/// `slow`, chosen by the seed; the rest take `fast`.
[[nodiscard]] std::vector<export_item> make_items(const workload_spec& spec);

/// How many rows of `spec` straggle.
[[nodiscard]] uint64_t stragglers(const workload_spec& spec) noexcept;

/// The exported line of `x`.
[[nodiscard]] std::string render_line(const export_item& x);

} // namespace ordered_export
