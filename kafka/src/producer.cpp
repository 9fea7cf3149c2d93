// SPDX-License-Identifier: Apache-2.0
#include "keylane/kafka/producer.hpp"

#include "keylane/errc.hpp"
#include "rdkafka.hpp"

namespace keylane::kafka {

caf::expected<std::unique_ptr<producer>>
producer::start(const std::string& bootstrap_servers,
                const std::map<std::string, std::string>& properties) {
  std::unique_ptr<producer> out{new producer};
  auto conf = rdkafka::new_conf();
  std::map<std::string, std::string> props{
    {"bootstrap.servers", bootstrap_servers},
    {"enable.idempotence", "true"},
    {"linger.ms", "5"},
  };
  for (const auto& kv : properties)
    props[kv.first] = kv.second;
  for (const auto& [k, v] : props)
    if (auto why = rdkafka::set(*conf, k, v))
      return make_error(errc::invalid_config,
                        "producer property " + k + ": " + *why);
  rd_kafka_conf_set_opaque(conf.get(), out.get());
  rd_kafka_conf_set_dr_msg_cb(
    conf.get(), [](rd_kafka_t*, const rd_kafka_message_t* m, void* opaque) {
      auto* self = static_cast<producer*>(opaque);
      (m->err ? self->failed_ : self->delivered_)++;
    });
  auto rk = rdkafka::new_client(RD_KAFKA_PRODUCER, std::move(conf),
                                "producer");
  if (!rk)
    return std::move(rk.error());
  out->rk_ = std::move(*rk);
  return out;
}

producer::~producer() {
  // The client goes with the members, after the flush.
  if (rk_)
    rd_kafka_flush(rk_.get(), 10000);
}

caf::error producer::produce(const std::string& topic, std::string_view key,
                             std::string_view value,
                             const std::vector<header>& headers,
                             int32_t partition) {
  for (;;) {
    auto hdrs = rdkafka::new_headers(headers.size());
    for (const auto& [name, val] : headers)
      rd_kafka_header_add(hdrs.get(), name.data(), name.size(), val.data(),
                          val.size());
    auto err = rd_kafka_producev(
      rk_.get(), RD_KAFKA_V_TOPIC(topic.c_str()),
      RD_KAFKA_V_PARTITION(partition),
      RD_KAFKA_V_KEY(key.data(), key.size()),
      RD_KAFKA_V_VALUE(const_cast<char*>(value.data()), value.size()),
      RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY),
      RD_KAFKA_V_HEADERS(hdrs.get()), RD_KAFKA_V_END);
    if (!err) {
      hdrs.release(); // the message owns them now
      break;
    }
    // Not taken over on failure: `hdrs` frees them.
    if (err != RD_KAFKA_RESP_ERR__QUEUE_FULL)
      return make_error(errc::handler_failed,
                        "produce: " + rdkafka::to_string(err));
    rd_kafka_poll(rk_.get(), 50); // room comes back as deliveries are served
  }
  rd_kafka_poll(rk_.get(), 0);
  return caf::none;
}

caf::error producer::flush(std::chrono::milliseconds timeout) {
  auto err = rd_kafka_flush(rk_.get(), static_cast<int>(timeout.count()));
  if (err)
    return make_error(errc::timeout, "flush: " + rdkafka::to_string(err));
  return caf::none;
}

} // namespace keylane::kafka
