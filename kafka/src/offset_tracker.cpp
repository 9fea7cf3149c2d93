// SPDX-License-Identifier: Apache-2.0
#include "keylane/kafka/offset_tracker.hpp"

#include <algorithm>

namespace keylane::kafka {

void offset_tracker::take(int64_t offset) {
  open_.push_back({offset, false});
  ++unfinished_;
  before_ = next_;
  next_ = offset + 1;
}

void offset_tracker::untake() {
  if (open_.empty())
    return;
  auto& s = open_.back();
  if (!s.done)
    --unfinished_;
  if (!s.done && s.output && s.state)
    --awaiting_state_;
  open_.pop_back();
  next_ = before_;
}

offset_tracker::slot* offset_tracker::find(int64_t offset) {
  auto i = std::lower_bound(open_.begin(), open_.end(), offset,
                            [](const slot& s, int64_t x) {
                              return s.offset < x;
                            });
  if (i == open_.end() || i->offset != offset || i->done)
    return nullptr;
  return &*i;
}

void offset_tracker::done(slot& s) {
  s.done = true;
  --unfinished_;
  // Only a finished prefix becomes committable.
  while (!open_.empty() && open_.front().done)
    open_.pop_front();
}

bool offset_tracker::finish(int64_t offset) {
  auto* s = find(offset);
  if (!s || s->output)
    return false;
  s->output = true;
  if (s->state) {
    ++awaiting_state_;
    return false;
  }
  done(*s);
  return true;
}

bool offset_tracker::await_state(int64_t offset) {
  auto* s = find(offset);
  if (!s)
    return false;
  if (!s->state) {
    s->state = true;
    if (s->output)
      ++awaiting_state_;
  }
  return true;
}

bool offset_tracker::state_durable(int64_t offset) {
  auto* s = find(offset);
  if (!s || !s->state)
    return false;
  s->state = false;
  if (!s->output)
    return false;
  --awaiting_state_;
  done(*s);
  return true;
}

int64_t offset_tracker::committable() const noexcept {
  return open_.empty() ? next_ : open_.front().offset;
}

} // namespace keylane::kafka
