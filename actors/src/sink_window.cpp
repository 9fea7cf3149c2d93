// SPDX-License-Identifier: Apache-2.0
// `window = "auto"`: the sink measures how long events take and how long
// output waits, and resizes the admission window every 50 ms while events
// flow (see window_sizer.hpp for the rule). Nothing runs while idle.

#include <caf/all.hpp>

#include "keylane/detail/ingress.hpp"
#include "keylane/detail/sink.hpp"

namespace keylane::detail {

void sink::configure_window(const settings& s) {
  auto was = auto_window_;
  auto_window_ = s.window_auto;
  window_max_ = s.window_max;
  auto cap = s.max_active_keys;
  window_floor_ = std::min(window_max_, cap > unbounded / 2 ? unbounded
                                                            : 2 * cap);
  if (auto_window_ && !was)
    sizer_ = window_sizer{};
  // A tick that ran between the reload's store and this message may have
  // resized it: the fixed size wins.
  if (was && !auto_window_)
    parts_.in.resize_window(s.window);
}

void sink::measure(const event_batch& b) {
  auto now = clock::now();
  for (const auto& ev : b.items)
    if (ev->started != clock::time_point{}) // parked behind: never ran
      sizer_.record(now - ev->started);
  arm_sizing();
}

void sink::arm_sizing() {
  if (!sizing_) {
    sizing_ = true;
    delayed_send(this, window_sizer::tick, window_atom::value);
  }
}

void sink::on_window_tick() {
  sizing_ = false;
  if (!auto_window_)
    return;
  auto waiting = holding() > 0 ? clock::now() - stall_.since
                               : clock::duration::zero();
  parts_.in.resize_window(sizer_.resize(waiting, window_floor_, window_max_));
  // Keep measuring while anything is recent or held back; the next batch
  // re-arms it otherwise.
  if (sizer_.busy() || holding() > 0) {
    sizing_ = true;
    delayed_send(this, window_sizer::tick, window_atom::value);
  }
}

} // namespace keylane::detail
