// SPDX-License-Identifier: Apache-2.0
// Restores of assigned partitions from the changelog topic, on a thread of
// their own: the polling thread keeps serving the other partitions (and
// the group's heartbeats) while one restores.

#include <chrono>

#include "keylane/detail/state_components.hpp"
#include "keylane/errc.hpp"
#include "keylane/log.hpp"
#include "source_state.hpp"

namespace keylane::kafka {

caf::error source::state::open_changelog() {
  auto& rc = cfg.runtime;
  const auto& ks = cfg.source;
  std::unique_ptr<state_store> local;
  std::string markers;
  switch (rc.state_store) {
    case state_backend::none:
      return make_error(errc::invalid_config,
                        ks.origin + ": kafka.changelog_topic needs keyed "
                                    "state: set state.store = \"rocksdb\" "
                                    "(a local cache that survives restarts) "
                                    "or \"memory\"");
    case state_backend::memory:
      local = make_memory_state_store();
      break;
    case state_backend::rocksdb: {
      if (!keylane::detail::component_open_rocksdb_state_store)
        return make_error(errc::invalid_config,
                          "state.store = \"rocksdb\" needs keylane's RocksDB "
                          "state store: link keylane::state");
      auto st = keylane::detail::component_open_rocksdb_state_store(
        rc.state_path, rc.state_recover,
        [this](log_level, std::string_view line) {
          warn(std::string{line});
        });
      if (!st)
        return std::move(st.error());
      local = std::move(*st);
      // Beside the directory, not in it: the directory is RocksDB's.
      markers = rc.state_path + ".changelog";
      break;
    }
  }
  auto cs = changelog_store::open(ks, std::move(local), std::move(markers));
  if (!cs)
    return std::move(cs.error());
  changelog = std::shared_ptr<changelog_store>{std::move(*cs)};
  auto once = std::make_shared<std::shared_ptr<changelog_store>>(changelog);
  rc.state_store_open = [once]() -> caf::expected<std::unique_ptr<state_store>> {
    if (!*once)
      return make_error(errc::invalid_config,
                        "the changelog store is the source's runtime's alone");
    auto out = share(std::move(*once));
    once->reset();
    return out;
  };
  // A key's lane retires as soon as it is empty: a lane that lingered
  // would keep its state in memory past a revoke, and a partition that
  // came back after another member changed its keys would run on it.
  rc.lane_linger_ms = 0;
  return caf::none;
}

void source::state::start_restore(const std::shared_ptr<partition_state>& p) {
  p->restoring = true;
  p->restore_queued = true;
  {
    std::lock_guard<std::mutex> guard{restore_mu};
    restore_queue.push_back(p);
  }
  restore_cv.notify_all();
}

void source::state::stop_restorer() {
  {
    std::lock_guard<std::mutex> guard{restore_mu};
    restore_stopping = true;
  }
  restore_cv.notify_all();
  if (restorer.joinable())
    restorer.join();
}

void source::state::restore_loop() {
  std::unique_lock<std::mutex> lk{restore_mu};
  for (;;) {
    restore_cv.wait(lk,
                    [&] { return restore_stopping || !restore_queue.empty(); });
    if (restore_stopping)
      return;
    auto p = restore_queue.front();
    restore_queue.pop_front();
    lk.unlock();
    auto got = changelog->restore(p->partition);
    lk.lock();
    if (!got) {
      n.restore_failures++;
      warn(render(got.error()) + " (retrying in a second; the partition's "
           "records wait)");
      restore_queue.push_front(std::move(p));
      restore_cv.wait_for(lk, std::chrono::seconds(1),
                          [&] { return restore_stopping; });
      continue;
    }
    n.restores++;
    n.records_restored += got->records;
    n.restore_bytes += got->bytes;
    n.restore_ms += static_cast<uint64_t>(got->seconds * 1000.0);
    if (cfg.runtime.log >= log_level::info && got->records > 0)
      warn("restored " + std::to_string(got->records) + " records ("
           + std::to_string(got->bytes) + " bytes) of "
           + cfg.source.changelog_topic + '/' + std::to_string(p->partition)
           + " in " + std::to_string(got->seconds) + " s");
    p->restored = true;
  }
}

} // namespace keylane::kafka
