// SPDX-License-Identifier: Apache-2.0
#include "kafka_feed.hpp"

#include <chrono>
#include <random>
#include <vector>

#include "keylane/errc.hpp"
#include "keylane/kafka/mock_cluster.hpp"
#include "keylane/kafka/producer.hpp"

namespace keylane::bench::kafka {

workload make_workload(size_t keys, size_t records, int partitions,
                       int64_t max_delay_us) {
  workload w;
  w.keys = keys;
  w.records = records;
  w.partitions = partitions;
  w.max_delay_us = max_delay_us;
  w.topic = "bench_keys_" + std::to_string(keys);
  w.name = std::to_string(records) + "_records_" + std::to_string(keys)
           + "_keys";
  return w;
}

std::string fill(keylane::kafka::mock_cluster& cluster, const workload& w) {
  if (auto err = cluster.create_topic(w.topic, w.partitions))
    return "create topic " + w.topic + ": " + keylane::render(err);
  auto prod = keylane::kafka::producer::start(cluster.bootstrap_servers(),
                                              {{"linger.ms", "20"},
                                               {"log_level", "2"}});
  if (!prod)
    return "producer: " + keylane::render(prod.error());
  // The same seed for every topic: each way sees the same handler times.
  std::mt19937_64 rng{20261130};
  std::uniform_int_distribution<int64_t> delay{0, w.max_delay_us};
  std::vector<uint64_t> next(w.keys, 0);
  for (size_t i = 0; i < w.records; ++i) {
    auto j = static_cast<uint64_t>(rng() % w.keys);
    auto part = static_cast<int32_t>(j % static_cast<uint64_t>(w.partitions));
    auto value = std::to_string(j) + ':' + std::to_string(next[j]++) + ':'
                 + std::to_string(delay(rng));
    if (auto err = (*prod)->produce(w.topic, "k" + std::to_string(j), value,
                                    {{"part", std::to_string(part)},
                                     {"id", std::to_string(i)}},
                                    part))
      return "produce: " + keylane::render(err);
  }
  if (auto err = (*prod)->flush(std::chrono::seconds(60)))
    return "flush: " + keylane::render(err);
  return {};
}

bool parse_value(const char* data, size_t size, uint64_t& key, uint64_t& n,
                 int64_t& delay_us) {
  uint64_t parts[3] = {0, 0, 0};
  int at = 0;
  bool digit = false;
  for (size_t i = 0; i < size; ++i) {
    char c = data[i];
    if (c == ':') {
      if (!digit || ++at > 2)
        return false;
      digit = false;
    } else if (c >= '0' && c <= '9') {
      parts[at] = parts[at] * 10 + static_cast<uint64_t>(c - '0');
      digit = true;
    } else {
      return false;
    }
  }
  if (at != 2 || !digit)
    return false;
  key = parts[0];
  n = parts[1];
  delay_us = static_cast<int64_t>(parts[2]);
  return true;
}

} // namespace keylane::bench::kafka
