// SPDX-License-Identifier: Apache-2.0
#include "way.hpp"

#include <algorithm>

namespace keylane::bench {

const std::vector<std::string>& way_names() {
  static const std::vector<std::string> names{
    "single_loop", "shared_queue",  "hash_partitions", "asio_strand",
    "caf_naive",   "keylane_none", "keylane_per_key", "keylane_global",
    "keylane_state", "keylane_state_memory", "ordered_partitions",
    "keyed_partitions", "keyed_slots", "caf_lanes", "caf_lanes_capped",
    "caf_lanes_featured",
    "keylane_tell"};
  return names;
}

std::vector<std::string> default_way_names() {
  std::vector<std::string> out;
  for (auto& n : way_names())
    if (n.rfind("keylane_state", 0) != 0 && n != "ordered_partitions"
        && n != "keyed_partitions" && n != "keyed_slots"
        && n.rfind("caf_lanes", 0) != 0 && n != "keylane_tell")
      out.push_back(n);
  return out;
}

std::vector<way_spec>
make_way_specs(const std::vector<std::string>& names,
               const std::vector<std::string>& schedulers,
               const std::vector<int>& threads,
               const std::vector<std::string>& sets) {
  std::vector<way_spec> out;
  auto wanted = [&](const std::string& n) {
    return std::find(names.begin(), names.end(), n) != names.end();
  };
  // A spec per count of worker threads, for a way made by `make(n)`.
  auto each_count = [&](const std::string& name, bool ordered,
                        const std::string& sched, const std::string& store,
                        auto make) {
    for (int n : threads)
      out.push_back({name, ordered, sched, store, n, [make, n] {
                       return make(n);
                     }});
  };
  auto plain = [&](const std::string& name, bool ordered,
                   std::unique_ptr<way> (*make)(int)) {
    if (wanted(name))
      each_count(name, ordered, "", "", make);
  };
  // single_loop has no worker threads: it runs once, on the producer's.
  if (wanted("single_loop"))
    out.push_back({"single_loop", true, "", "", 1, make_single_loop});
  plain("shared_queue", false, make_shared_queue);
  plain("hash_partitions", true, make_hash_partitions);
  plain("ordered_partitions", true, make_ordered_partitions);
  plain("keyed_partitions", true, make_keyed_partitions);
  plain("keyed_slots", true, make_keyed_slots);
  plain("caf_lanes", true, make_caf_lanes);
  plain("caf_lanes_capped", true, make_caf_lanes_capped);
  plain("caf_lanes_featured", true, make_caf_lanes_featured);
  plain("asio_strand", true, make_asio_strand);
  plain("caf_naive", true, make_caf_naive);
  // keylane_none emits in completion order: per-key order is expected from
  // the lanes but not promised by order = none, so it is reported, not
  // asserted.
  for (const char* order : {"none", "per_key", "global"}) {
    auto name = std::string{"keylane_"} + order;
    if (!wanted(name))
      continue;
    for (auto& sched : schedulers)
      each_count(name, std::string{order} != "none", sched, "",
                 [order, sched, sets](int n) {
                   return make_keylane(order, sched, n, sets);
                 });
  }
  if (wanted("keylane_tell"))
    for (auto& sched : schedulers)
      each_count("keylane_tell", true, sched, "", [sched, sets](int n) {
        return make_keylane_tell(sched, n, sets);
      });
  // keylane_per_key with keyed state: the cost of the state API
  // (_memory) and of RocksDB on top of it.
  for (const char* store : {"rocksdb", "memory"}) {
    auto name = std::string{"keylane_state"}
                + (std::string{store} == "rocksdb" ? "" : "_memory");
    if (!wanted(name))
      continue;
    for (auto& sched : schedulers)
      each_count(name, true, sched, store, [store, sched, sets](int n) {
        return make_keylane_state(store, sched, n, sets);
      });
  }
  return out;
}

} // namespace keylane::bench
