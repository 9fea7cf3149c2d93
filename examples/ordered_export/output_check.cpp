// SPDX-License-Identifier: Apache-2.0
#include "output_check.hpp"

namespace ordered_export {

output_check::output_check(uint64_t items, keylane::order_mode order,
                           keying keys_by)
  : order_(order),
    keys_by_(keys_by),
    seen_(items, 0),
    last_row_(keys_by == keying::per_customer ? customers : items, 0) {}

void output_check::seen(uint64_t seq, const export_item& item,
                        keylane::outcome status) {
  auto now = clock::now();
  if (outputs_++ == 0)
    first_ = now;
  last_ = now;
  if (status != keylane::outcome::ok)
    ++tombstones_;
  if (item.index >= seen_.size() || seen_[item.index]++ != 0)
    ++duplicates_;
  switch (order_) {
    case keylane::order_mode::global:
      if (any_ && seq <= last_seq_)
        ++violations_;
      last_seq_ = seq;
      any_ = true;
      break;
    case keylane::order_mode::per_key: {
      auto k = keys_by_ == keying::per_customer ? item.customer : item.index;
      if (k < last_row_.size()) {
        if (last_row_[k] > item.index)
          ++violations_;
        last_row_[k] = item.index + 1;
      }
      break;
    }
    case keylane::order_mode::none:
      break;
  }
}

uint64_t output_check::missing() const noexcept {
  uint64_t n = 0;
  for (auto x : seen_)
    n += x == 0 ? 1 : 0;
  return n;
}

double output_check::seconds(clock::time_point t) const noexcept {
  if (outputs_ == 0)
    return 0;
  return std::chrono::duration<double>(t - t0_).count();
}

} // namespace ordered_export
