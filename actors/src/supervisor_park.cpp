// SPDX-License-Identifier: Apache-2.0
// The supervisor's side of parking: events of parked keys without a lane,
// and the operator calls replay and discard.

#include "keylane/detail/supervisor.hpp"

#include <caf/all.hpp>

#include "keylane/detail/counters.hpp"
#include "keylane/detail/inboxes.hpp"
#include "keylane/detail/ingress.hpp"
#include "keylane/detail/key_table.hpp"
#include "keylane/detail/messaging.hpp"
#include "keylane/detail/output.hpp"
#include "keylane/detail/park_service.hpp"
#include "keylane/detail/stop_ledger.hpp"

namespace keylane::detail {

void supervisor::write_parked() {
  if (written_ == to_park_.size())
    return;
  if (!parts_.parks.park(to_park_.data() + written_,
                         to_park_.size() - written_)) {
    // Stopping with a store that refuses them: stop lists them.
    for (auto i = written_; i < to_park_.size(); ++i)
      parts_.ledger.abandon(std::move(to_park_[i]), "queued");
    to_park_.resize(written_);
    return;
  }
  for (auto i = written_; i < to_park_.size(); ++i)
    parts_.msg.ended(*to_park_[i]);
  written_ = to_park_.size();
}

void supervisor::deliver_parked() {
  if (to_park_.empty())
    return;
  for (auto& ev : to_park_)
    parts_.keys.ended(ev->k, 1);
  written_ = 0;
  if (parts_.cfg.order != order_mode::global) {
    // Nothing to re-sequence; its block is the one after the shards'.
    parts_.out.emit(to_park_, parts_.pub.tallies.back().get());
    return;
  }
  auto b = std::make_shared<event_batch>(&parts_.ledger, "completed");
  b->items = std::move(to_park_);
  to_park_.clear();
  send(sink_, events_atom::value, std::move(b));
}

void supervisor::operate(bool replay, const key& k, op_reply reply) {
  auto st = parts_.keys.parked(k);
  if (!st.parked) {
    reply->set_value(uint64_t{0});
    return;
  }
  if (st.lane_alive) {
    // Its lane still parks events it was sent: act once it is gone, so the
    // store holds every one of them.
    deferred_[k].emplace_back(replay, std::move(reply));
    return;
  }
  reply->set_value(replay ? replay_now(k) : discard_now(k));
}

void supervisor::route_ingress_of(const key& k) {
  // Every event of `k` submitted so far is in ingress or here; take the
  // rest now, so they are parked (and replayed or discarded) with the others.
  for (;;) {
    auto n = parts_.boxes.take_parked_of(key_table::stripe_of(k), buf_.data(),
                                         buf_.size());
    if (n == 0)
      break;
    for (size_t i = 0; i < n; ++i)
      route(event_ptr{buf_[i]});
  }
}

caf::expected<uint64_t> supervisor::replay_now(const key& k) {
  caf::expected<uint64_t> result = uint64_t{0};
  // Under `k`'s lock: nothing of `k` is admitted meanwhile, so events of `k`
  // submitted later get sequence numbers after the replayed ones.
  parts_.keys.replay(k, [&](std::vector<event_ptr>& revived) {
    route_ingress_of(k);
    write_parked(); // backlog releases wait: they take the lock we hold
    auto recs = parts_.parks.store()->records(k);
    if (!recs) {
      result = std::move(recs.error());
      return false;
    }
    revived.reserve(recs->size());
    for (const auto& r : *recs) {
      auto ev = parts_.ops.revive(r);
      if (!ev) {
        result = make_error(errc::codec_failed,
                            "cannot replay parked event " + std::to_string(r.id)
                              + " of " + k.to_string() + ": "
                              + render(ev.error()));
        revived.clear();
        return false;
      }
      (*ev)->park_id = r.id;
      revived.push_back(std::move(*ev));
    }
    parts_.in.accept_replayed(revived);
    result = revived.size();
    return true;
  });
  deliver_parked();
  if (result)
    replayed_ += *result;
  publish();
  return result;
}

caf::expected<uint64_t> supervisor::discard_now(const key& k) {
  caf::expected<uint64_t> result = uint64_t{0};
  parts_.keys.unpark(k, [&] {
    route_ingress_of(k);
    write_parked();
    result = parts_.parks.store()->discard(k);
    return static_cast<bool>(result);
  });
  deliver_parked();
  return result;
}

} // namespace keylane::detail
