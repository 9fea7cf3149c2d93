// SPDX-License-Identifier: Apache-2.0
#include "export_handler.hpp"

#include <algorithm>
#include <utility>

namespace ordered_export {

void busy_meter::begin() {
  std::lock_guard<std::mutex> guard{mtx_};
  ++open_;
}

void busy_meter::end(clock::time_point from, clock::time_point to) {
  auto d = std::chrono::duration_cast<std::chrono::nanoseconds>(to - from);
  if (cap_.count() > 0)
    d = std::min(d, cap_);
  {
    std::lock_guard<std::mutex> guard{mtx_};
    busy_ += d;
    --open_;
  }
  cv_.notify_all();
}

bool busy_meter::settle(std::chrono::nanoseconds timeout) {
  std::unique_lock<std::mutex> guard{mtx_};
  return cv_.wait_for(guard, timeout, [this] { return open_ == 0; });
}

std::chrono::nanoseconds busy_meter::busy() {
  std::lock_guard<std::mutex> guard{mtx_};
  return busy_;
}

void export_handler::on_event(export_item& item,
                              keylane::completion<export_row> done) {
  auto started = busy_meter::clock::now();
  busy_->begin();
  // Whichever comes first ends the call for the meter: its completion, or
  // the attempt timeout, when the lane stops waiting for it. Both run on
  // this lane, one at a time.
  auto counted = std::make_shared<bool>(false);
  auto over = [busy = busy_, started, counted] {
    if (*counted)
      return;
    *counted = true;
    busy->end(started, busy_meter::clock::now());
  };
  if (busy_->cap().count() > 0 && item.work >= busy_->cap())
    run_later(busy_->cap(), over);
  run_later(item.work, [d = std::move(done), over,
                        row = export_row{item.index, render_line(item)}]() mutable {
    over();
    // After an attempt timeout the runtime has moved on and ignores this.
    d.ok(row);
  });
}

} // namespace ordered_export
