// SPDX-License-Identifier: Apache-2.0
#include "keylane/kafka/producer.hpp"

#include <librdkafka/rdkafka.h>

#include "keylane/errc.hpp"

namespace keylane::kafka {

caf::expected<std::unique_ptr<producer>>
producer::start(const std::string& bootstrap_servers,
                const std::map<std::string, std::string>& properties) {
  std::unique_ptr<producer> out{new producer};
  auto* conf = rd_kafka_conf_new();
  char err[512];
  std::map<std::string, std::string> props{
    {"bootstrap.servers", bootstrap_servers},
    {"enable.idempotence", "true"},
    {"linger.ms", "5"},
  };
  for (const auto& kv : properties)
    props[kv.first] = kv.second;
  for (const auto& [k, v] : props)
    if (rd_kafka_conf_set(conf, k.c_str(), v.c_str(), err, sizeof err)
        != RD_KAFKA_CONF_OK) {
      rd_kafka_conf_destroy(conf);
      return make_error(errc::invalid_config,
                        "producer property " + k + ": " + err);
    }
  rd_kafka_conf_set_opaque(conf, out.get());
  rd_kafka_conf_set_dr_msg_cb(
    conf, [](rd_kafka_t*, const rd_kafka_message_t* m, void* opaque) {
      auto* self = static_cast<producer*>(opaque);
      (m->err ? self->failed_ : self->delivered_)++;
    });
  out->rk_ = rd_kafka_new(RD_KAFKA_PRODUCER, conf, err, sizeof err);
  if (!out->rk_) {
    rd_kafka_conf_destroy(conf);
    return make_error(errc::startup_failed, std::string{"producer: "} + err);
  }
  return out;
}

producer::~producer() {
  if (!rk_)
    return;
  rd_kafka_flush(rk_, 10000);
  rd_kafka_destroy(rk_);
}

caf::error producer::produce(const std::string& topic, std::string_view key,
                             std::string_view value,
                             const std::vector<header>& headers,
                             int32_t partition) {
  for (;;) {
    auto* hdrs = rd_kafka_headers_new(headers.size());
    for (const auto& [name, val] : headers)
      rd_kafka_header_add(hdrs, name.data(), name.size(), val.data(),
                          val.size());
    auto err = rd_kafka_producev(
      rk_, RD_KAFKA_V_TOPIC(topic.c_str()), RD_KAFKA_V_PARTITION(partition),
      RD_KAFKA_V_KEY(key.data(), key.size()),
      RD_KAFKA_V_VALUE(const_cast<char*>(value.data()), value.size()),
      RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY), RD_KAFKA_V_HEADERS(hdrs),
      RD_KAFKA_V_END);
    if (!err)
      break;
    rd_kafka_headers_destroy(hdrs); // not taken over on failure
    if (err != RD_KAFKA_RESP_ERR__QUEUE_FULL)
      return make_error(errc::handler_failed,
                        std::string{"produce: "} + rd_kafka_err2str(err));
    rd_kafka_poll(rk_, 50); // room comes back as deliveries are served
  }
  rd_kafka_poll(rk_, 0);
  return caf::none;
}

caf::error producer::flush(std::chrono::milliseconds timeout) {
  auto err = rd_kafka_flush(rk_, static_cast<int>(timeout.count()));
  if (err)
    return make_error(errc::timeout,
                      std::string{"flush: "} + rd_kafka_err2str(err));
  return caf::none;
}

} // namespace keylane::kafka
