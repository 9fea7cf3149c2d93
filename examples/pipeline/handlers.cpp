// SPDX-License-Identifier: Apache-2.0
#include "handlers.hpp"

#include <utility>

namespace pipeline_example {

void fetch_handler::on_event(item& x, keylane::completion<fetched> done) {
  run_later(x.fetch, [d = std::move(done), out = fetched{x, cents_of(x)}]() mutable {
    d.ok(out);
  });
}

void convert_handler::on_event(fetched& x, keylane::completion<priced> done) {
  run_later(x.in.convert,
            [d = std::move(done),
             out = priced{x.in.index, x.in.account, converted(x)}]() mutable {
              d.ok(out);
            });
}

int64_t total_store::load(uint32_t account) {
  std::lock_guard<std::mutex> guard{mtx_};
  return totals_[account];
}

void total_store::save(uint32_t account, int64_t total) {
  std::lock_guard<std::mutex> guard{mtx_};
  totals_[account] = total;
}

void total_handler::on_activate(const keylane::key& k) {
  total_ = store_->load(static_cast<uint32_t>(k.integer()));
}

void total_handler::on_retire(const keylane::key& k) {
  store_->save(static_cast<uint32_t>(k.integer()), total_);
}

void total_handler::on_event(fetched& x, keylane::completion<priced> done) {
  total_ += x.cents;
  done.ok(priced{x.in.index, x.in.account, total_});
}

} // namespace pipeline_example
