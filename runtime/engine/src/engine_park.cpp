// SPDX-License-Identifier: Apache-2.0
// The engine's side of parking: what `stop` keeps in the durable store, and
// the operator calls that the supervisor carries out.

#include "keylane/detail/engine.hpp"

#include <algorithm>
#include <exception>
#include <future>
#include <iostream>

#include <caf/all.hpp>

#include "keylane/detail/messages.hpp"

namespace keylane::detail {

void engine::keep_unfinished(std::vector<event_ptr> evs) {
  // The actors are gone: no other writer. Each key's events go in its
  // submission order, behind what its key had parked already.
  if (evs.empty())
    return;
  std::sort(evs.begin(), evs.end(),
            [](auto& x, auto& y) { return x->seq < y->seq; });
  for (auto& ev : evs)
    ev->error = "the runtime stopped before it finished";
  // A store that refuses them now is not waited for (stop interrupted the
  // park service): they stay listed, not kept.
  static_cast<void>(parks_->park(evs.data(), evs.size()));
  auto& out = report_.unfinished;
  for (auto& ev : evs) {
    if (ev->status != outcome::parked)
      continue;
    auto i = std::lower_bound(out.begin(), out.end(), ev->seq,
                              [](auto& u, uint64_t s) { return u.seq < s; });
    if (i != out.end() && i->seq == ev->seq)
      i->kept = true;
  }
}

caf::expected<std::vector<parked_key>> engine::parked_keys() {
  if (!parks_->store())
    return std::vector<parked_key>{};
  return parks_->store()->keys();
}

caf::expected<std::vector<parked_record>>
engine::parked_records(const key& k) {
  if (!parks_->store())
    return std::vector<parked_record>{};
  return parks_->store()->records(k);
}

caf::expected<uint64_t> engine::replay(const key& k) {
  return ask_supervisor(true, k);
}

caf::expected<uint64_t> engine::discard(const key& k) {
  return ask_supervisor(false, k);
}

caf::expected<uint64_t> engine::ask_supervisor(bool replay, const key& k) {
  if (!parks_->store())
    return uint64_t{0};
  if (stopped_.load(std::memory_order_acquire))
    return make_error(errc::stopped, "the runtime is stopping");
  auto reply = std::make_shared<std::promise<caf::expected<uint64_t>>>();
  auto answer = reply->get_future();
  if (replay)
    caf::anon_send(supervisor_, replay_atom::value, k, std::move(reply));
  else
    caf::anon_send(supervisor_, discard_atom::value, k, std::move(reply));
  try {
    return answer.get();
  } catch (const std::future_error&) {
    return make_error(errc::stopped, "the runtime stopped before it could "
                                     "answer");
  }
}

} // namespace keylane::detail
