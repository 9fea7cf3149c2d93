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
  if (!open_.back().done)
    --unfinished_;
  open_.pop_back();
  next_ = before_;
}

bool offset_tracker::finish(int64_t offset) {
  auto i = std::lower_bound(open_.begin(), open_.end(), offset,
                            [](const slot& s, int64_t x) {
                              return s.offset < x;
                            });
  if (i == open_.end() || i->offset != offset || i->done)
    return false;
  i->done = true;
  --unfinished_;
  // Only a finished prefix becomes committable.
  while (!open_.empty() && open_.front().done)
    open_.pop_front();
  return true;
}

int64_t offset_tracker::committable() const noexcept {
  return open_.empty() ? next_ : open_.front().offset;
}

} // namespace keylane::kafka
