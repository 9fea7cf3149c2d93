// SPDX-License-Identifier: Apache-2.0
#pragma once

// Reads a whole topic back from a cluster: every partition from its start,
// without a group (assign, not subscribe), for checking an output topic.

#include <chrono>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "rdkafka.hpp" // keylane::kafka's librdkafka owners (private)

namespace kafka_test {

/// One record read back.
struct read_record {
  int32_t partition = 0;
  int64_t offset = 0;
  std::string key;
  std::string value;
  std::vector<std::pair<std::string, std::string>> headers;

  /// The last value of header `name`, or "" when absent.
  [[nodiscard]] std::string header(const std::string& name) const {
    for (auto i = headers.rbegin(); i != headers.rend(); ++i)
      if (i->first == name)
        return i->second;
    return {};
  }
};

/// Reads `topic` (partitions 0..partitions-1) until `want` records came or
/// `timeout` passed, then reads 200 ms more so extra records show too.
inline std::vector<read_record>
read_topic(const std::string& bootstrap, const std::string& topic,
           int partitions, size_t want, std::chrono::milliseconds timeout) {
  namespace rdk = keylane::kafka::rdkafka;
  std::vector<read_record> out;
  auto conf = rdk::new_conf();
  (void) rdk::set(*conf, "bootstrap.servers", bootstrap);
  (void) rdk::set(*conf, "group.id", "topic-reader");
  (void) rdk::set(*conf, "log_level", "2");
  std::string why;
  auto rk = rdk::new_client(RD_KAFKA_CONSUMER, std::move(conf), why);
  if (!rk)
    return out;
  rd_kafka_poll_set_consumer(rk.get());
  auto l = rdk::new_list(partitions);
  for (int p = 0; p < partitions; ++p)
    rdk::add(*l, topic, p).offset = RD_KAFKA_OFFSET_BEGINNING;
  rd_kafka_assign(rk.get(), l.get());
  auto until = std::chrono::steady_clock::now() + timeout;
  bool extra = false;
  while (std::chrono::steady_clock::now() < until) {
    if (!extra && out.size() >= want) {
      extra = true;
      until = std::chrono::steady_clock::now() + std::chrono::milliseconds(200);
    }
    auto m = rdk::consumer_poll(rk.get(), 50);
    if (!m)
      continue;
    if (!m->err) {
      read_record r;
      r.partition = m->partition;
      r.offset = m->offset;
      if (m->key)
        r.key.assign(static_cast<const char*>(m->key), m->key_len);
      if (m->payload)
        r.value.assign(static_cast<const char*>(m->payload), m->len);
      rd_kafka_headers_t* hdrs = nullptr;
      if (rd_kafka_message_headers(m.get(), &hdrs)
          == RD_KAFKA_RESP_ERR_NO_ERROR) {
        const char* name;
        const void* val;
        size_t size;
        for (size_t i = 0; rd_kafka_header_get_all(hdrs, i, &name, &val, &size)
                           == RD_KAFKA_RESP_ERR_NO_ERROR;
             ++i)
          r.headers.emplace_back(
            name, val ? std::string{static_cast<const char*>(val), size}
                      : std::string{});
      }
      out.push_back(std::move(r));
    }
  }
  rd_kafka_consumer_close(rk.get()); // then destroyed, with `rk`
  return out;
}

} // namespace kafka_test
