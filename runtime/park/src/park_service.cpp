// SPDX-License-Identifier: Apache-2.0
// Parking's storage side: the store, writing parked events, removing
// replayed ones. The supervisor owns which keys are parked.

#include "keylane/detail/park_service.hpp"

#include <exception>
#include <iostream>

#include "keylane/detail/park_components.hpp"
#include "keylane/errc.hpp"

namespace keylane::detail {

park_service::park_service(std::unique_ptr<park_store> st,
                           const payload_ops& ops, bool durable)
  : store_(std::move(st)), ops_(ops), durable_(durable) {
}

caf::expected<std::unique_ptr<park_service>>
park_service::open(const settings& cfg, const payload_ops& ops) {
  std::unique_ptr<park_store> st;
  switch (cfg.park) {
    case park_mode::none:
      break;
    case park_mode::memory:
      if (!ops.copies && !ops.bytes)
        return make_error(errc::invalid_config,
                          "park.store = \"memory\" keeps a copy or the bytes "
                          "of each parked payload, but the payload type has "
                          "neither a copy constructor nor a keylane::codec: "
                          "add one, or set park.store = \"none\"");
      st = make_memory_park_store();
      break;
    case park_mode::sqlite: {
      if (!ops.bytes)
        return make_error(errc::invalid_config,
                          "park.store = \"sqlite\" writes payloads as bytes, "
                          "but the payload type has no keylane::codec: give "
                          "it an inspect() overload or specialise "
                          "keylane::codec");
      if (cfg.park_path.empty())
        return make_error(errc::invalid_config,
                          "park.store = \"sqlite\" needs park.path");
      if (!component_open_sqlite_park_store)
        return make_error(
          errc::invalid_config,
          "park.store = \"sqlite\" needs keylane's SQLite park store, "
          "which this program does not link: link keylane::sqlite "
          "(find_package(keylane COMPONENTS sqlite)), built when "
          "KEYLANE_BUILD_SQLITE is on");
      auto opened = component_open_sqlite_park_store(cfg.park_path);
      if (!opened)
        return std::move(opened.error()); // already park_store_failed, with path
      st = std::move(*opened);
      break;
    }
  }
  return std::unique_ptr<park_service>{
    new park_service(std::move(st), ops, cfg.park == park_mode::sqlite)};
}

void park_service::park(event_ptr* evs, size_t n) {
  std::vector<parked_record> recs;
  std::vector<event_base*> fresh;
  caf::error err;
  auto now = std::chrono::system_clock::now();
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
    err = ops_.park(ev, r, durable_);
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

void park_service::unpark_through(const key& k, uint64_t id) {
  auto removed = store_->remove_through(k, id);
  if (!removed)
    // The events ran; only the store's copy outlives them, and a later
    // replay would run them again. Say so rather than hide it.
    std::cerr << "keylane: could not remove replayed events of " << k
              << " from the park store: " << render(removed.error()) << '\n';
}

} // namespace keylane::detail
