// SPDX-License-Identifier: Apache-2.0
#pragma once

// The keyed state of the Kafka state tests' handler (tests/kafka/member.cpp,
// handler "sum_state"): per key, the sum of its records' values (small
// integers as text) and how many were applied. Shared by the member, which
// writes it, and the test, which reads it back from the RocksDB store.

#include <cstdint>

#include <caf/meta/type_name.hpp>

namespace kafka_test {

/// One key's running totals.
struct totals {
  int64_t sum = 0;
  int64_t count = 0;
};

/// CAF's inspection: gives `totals` its `keylane::codec`.
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, totals& x) {
  return f(caf::meta::type_name("kafka_test.totals"), x.sum, x.count);
}

} // namespace kafka_test
