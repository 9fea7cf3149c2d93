// SPDX-License-Identifier: Apache-2.0
#pragma once

// The benchmarks' keyed state: how many of its key's records a handler
// applied.

#include <cstdint>

#include <caf/meta/type_name.hpp>

namespace keylane::bench::kafka {

struct count_state {
  int64_t n = 0;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, count_state& x) {
  return f(caf::meta::type_name("bench.count_state"), x.n);
}

} // namespace keylane::bench::kafka
