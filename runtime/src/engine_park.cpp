// The engine's side of parking: the store, writing parked events, and the
// operator calls that the supervisor carries out.

#include "keylane/detail/engine.hpp"

#include <algorithm>
#include <exception>
#include <future>
#include <iostream>

#include <caf/all.hpp>

#include "keylane/detail/messages.hpp"

namespace keylane::detail {

caf::error engine::open_store() {
  switch (cfg_.park) {
    case park_mode::none:
      return caf::none;
    case park_mode::memory:
      if (!ops_.copies && !ops_.bytes)
        return make_error(errc::invalid_config,
                          "park.store = \"memory\" keeps a copy or the bytes "
                          "of each parked payload, but the payload type has "
                          "neither a copy constructor nor a keylane::codec: "
                          "add one, or set park.store = \"none\"");
      store_ = make_memory_park_store();
      return caf::none;
    case park_mode::sqlite: {
      if (!ops_.bytes)
        return make_error(errc::invalid_config,
                          "park.store = \"sqlite\" writes payloads as bytes, "
                          "but the payload type has no keylane::codec: give "
                          "it an inspect() overload or specialise "
                          "keylane::codec");
      if (cfg_.park_path.empty())
        return make_error(errc::invalid_config,
                          "park.store = \"sqlite\" needs park.path");
      auto st = open_sqlite_park_store(cfg_.park_path);
      if (!st)
        return std::move(st.error()); // already park_store_failed, with path
      store_ = std::move(*st);
      return caf::none;
    }
  }
  return caf::none;
}

void engine::park(event_ptr* evs, size_t n) {
  std::vector<parked_record> recs;
  std::vector<event_base*> fresh;
  caf::error err;
  auto now = std::chrono::system_clock::now();
  auto durable = cfg_.park == park_mode::sqlite;
  std::vector<parked_record> again;
  for (size_t i = 0; i < n && !err; ++i) {
    auto& ev = *evs[i];
    parked_record r;
    r.id = ev.park_id;
    r.seq = ev.seq;
    r.k = ev.k;
    r.reason = ev.error;
    r.attempts = ev.attempts;
    r.parked_at = now;
    if (ev.park_id != 0) {
      // Revived by a replay: still in the store, in its place.
      again.push_back(std::move(r));
      continue;
    }
    err = ops_.park(ev, r, durable);
    recs.push_back(std::move(r));
    fresh.push_back(&ev);
  }
  if (!again.empty()) {
    // Only the record's description is stale; the event is parked either way.
    if (auto e = store_->restamp(again))
      std::cerr << "keylane: could not record the latest failure of replayed "
                   "events in the park store: "
                << render(e) << '\n';
  }
  if (!err && !recs.empty()) {
    try {
      auto ids = store_->append(std::move(recs));
      if (!ids)
        err = std::move(ids.error());
      else
        for (size_t i = 0; i < fresh.size(); ++i)
          fresh[i]->park_id = (*ids)[i];
    } catch (const std::exception& e) {
      err = make_error(errc::park_store_failed, e.what());
    }
  }
  for (size_t i = 0; i < n; ++i) {
    auto& ev = *evs[i];
    if (err && ev.park_id == 0) {
      ev.status = outcome::failed;
      ev.error = "could not park (" + render(err) + "): " + ev.error;
    } else {
      ev.status = outcome::parked;
    }
  }
}

void engine::keep_unfinished() {
  // The actors are gone: no other writer. Each key's events go in its
  // submission order, behind what its key had parked already.
  std::vector<event_ptr> evs;
  {
    std::lock_guard<std::mutex> guard{abandoned_mtx_};
    evs.swap(to_keep_);
  }
  if (evs.empty())
    return;
  std::sort(evs.begin(), evs.end(),
            [](auto& x, auto& y) { return x->seq < y->seq; });
  for (auto& ev : evs)
    ev->error = "the runtime stopped before it finished";
  park(evs.data(), evs.size());
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

void engine::unpark_through(const key& k, uint64_t id) {
  auto removed = store_->remove_through(k, id);
  if (!removed)
    // The events ran; only the store's copy outlives them, and a later
    // replay would run them again. Say so rather than hide it.
    std::cerr << "keylane: could not remove replayed events of " << k
              << " from the park store: " << render(removed.error()) << '\n';
}

size_t engine::dequeue_ingress_of(const key& k, event_base** buf,
                                  size_t max) {
  return ingress_.try_dequeue_bulk_from_producer(
    *ingress_tokens_[backlog::shard_index(k)], buf, max);
}

void engine::accept_replayed(std::vector<event_ptr>& evs) {
  // Past the window on purpose: these were accepted once; refusing them now
  // would leave them parked with no way to run.
  in_flight_.fetch_add(evs.size(), std::memory_order_seq_cst);
  auto first = next_seq_.fetch_add(evs.size(), std::memory_order_acq_rel);
  auto now = clock::now();
  for (auto& ev : evs) {
    ev->seq = first++;
    ev->submitted = now;
  }
}

caf::expected<std::vector<parked_key>> engine::parked_keys() {
  if (!store_)
    return std::vector<parked_key>{};
  return store_->keys();
}

caf::expected<std::vector<parked_record>>
engine::parked_records(const key& k) {
  if (!store_)
    return std::vector<parked_record>{};
  return store_->records(k);
}

caf::expected<uint64_t> engine::replay(const key& k) {
  return ask_supervisor(true, k);
}

caf::expected<uint64_t> engine::discard(const key& k) {
  return ask_supervisor(false, k);
}

caf::expected<uint64_t> engine::ask_supervisor(bool replay, const key& k) {
  if (!store_)
    return uint64_t{0};
  if (stopping())
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
