#include "keylane/detail/messages.hpp"

#include "keylane/detail/engine.hpp"

namespace keylane::detail {

event_batch::~event_batch() {
  for (auto& ev : items)
    if (ev)
      eng->abandon(std::move(ev), stage);
}

} // namespace keylane::detail
