// SPDX-License-Identifier: Apache-2.0
// Parking's storage side: the store, writing parked events, removing
// replayed ones. The supervisor owns which keys are parked.

#include "keylane/detail/park_service.hpp"

#include <algorithm>
#include <chrono>
#include <exception>
#include <iostream>

#include "keylane/detail/logger.hpp"
#include "keylane/detail/park_components.hpp"
#include "keylane/errc.hpp"

namespace keylane::detail {

namespace {

// A store that refuses writes is tried again after this pause, doubled
// each time up to the second: soon after a disk comes back, without
// spinning while it does not.
constexpr auto first_pause = std::chrono::milliseconds(50);
constexpr auto longest_pause = std::chrono::milliseconds(1000);

} // namespace

park_service::park_service(std::unique_ptr<park_store> st,
                           const payload_ops& ops, bool durable, logger& log)
  : store_(std::move(st)), ops_(ops), durable_(durable), log_(log) {
}

caf::expected<std::unique_ptr<park_service>>
park_service::open(const settings& cfg, const payload_ops& ops, logger& log) {
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
    new park_service(std::move(st), ops, cfg.park == park_mode::sqlite, log)};
}

caf::expected<std::vector<uint64_t>>
park_service::append(const std::vector<parked_record>& recs) {
  try {
    return store_->append(recs);
  } catch (const std::exception& e) {
    return make_error(errc::park_store_failed, e.what());
  }
}

void park_service::interrupt() {
  {
    std::lock_guard<std::mutex> guard{mtx_};
    interrupted_ = true;
  }
  cv_.notify_all();
}

bool park_service::park(event_ptr* evs, size_t n) {
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
    // Nothing is marked parked before the store has it, and nothing is
    // dropped because it refused: the events wait for the disk. One writer
    // at a time, so a key's records still reach the store in order.
    std::unique_lock<std::mutex> lk{mtx_};
    auto pause = first_pause;
    for (;;) {
      auto ids = append(recs);
      if (ids) {
        for (size_t i = 0; i < fresh.size(); ++i)
          fresh[i]->park_id = (*ids)[i];
        if (streak_tries_ != 0)
          log_.write(log_level::warning,
                     "park: writing parked events to the park store works "
                     "again after "
                       + std::to_string(streak_tries_) + " failed tries; "
                       + std::to_string(recs.size()) + " events parked");
        streak_tries_ = 0;
        break;
      }
      write_failures_.fetch_add(1, std::memory_order_relaxed);
      if (streak_tries_++ == 0)
        log_.write(log_level::error,
                   "park: parking " + std::to_string(recs.size())
                     + " events failed: " + render(ids.error())
                     + "; trying again until it works (the events wait, not "
                       "acknowledged as parked, and so does the thread "
                       "that parks them)");
      if (cv_.wait_for(lk, pause, [&] { return interrupted_; })) {
        log_.write(log_level::error,
                   "park: " + std::to_string(recs.size())
                     + " events could not be parked before stop: stop "
                       "lists them");
        return false;
      }
      pause = std::min(pause * 2, longest_pause);
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
  return true;
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
