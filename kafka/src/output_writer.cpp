// SPDX-License-Identifier: Apache-2.0
#include "output_writer.hpp"

#include <map>

namespace keylane::kafka {

caf::expected<std::unique_ptr<output_writer>>
output_writer::start(const source_settings& s, delivery_fn on_delivery) {
  std::unique_ptr<output_writer> out{new output_writer};
  out->on_delivery_ = std::move(on_delivery);
  std::map<std::string, std::string> props{{"linger.ms", "5"}};
  for (const auto& kv : s.output_properties)
    props[kv.first] = kv.second;
  // Set last: the loader refuses these in output_properties, and a
  // program filling the settings itself must not turn them off either.
  props["bootstrap.servers"] = s.bootstrap_servers;
  props["enable.idempotence"] = "true";
  auto conf = rdkafka::new_conf();
  for (const auto& [k, v] : props)
    if (auto err = rdkafka::set(*conf, k, v, s.origin, "kafka output"))
      return err;
  rd_kafka_conf_set_opaque(conf.get(), out.get());
  rd_kafka_conf_set_dr_msg_cb(
    conf.get(), [](rd_kafka_t*, const rd_kafka_message_t* m, void* opaque) {
      auto* self = static_cast<output_writer*>(opaque);
      std::unique_ptr<output_ticket> t{
        static_cast<output_ticket*>(m->_private)};
      if (t && self->on_delivery_)
        self->on_delivery_(*t, m->err);
    });
  auto rk = rdkafka::new_client(RD_KAFKA_PRODUCER, std::move(conf),
                                "kafka output producer");
  if (!rk)
    return std::move(rk.error());
  out->rk_ = std::move(*rk);
  out->topic_ = rdkafka::new_topic(out->rk_.get(), s.output_topic);
  auto* raw = out.get();
  // Delivery reports come from rd_kafka_poll; a thread of its own serves
  // them so they arrive while the source's polling thread waits in a
  // revoke for exactly these deliveries.
  out->poller_ = std::thread{[raw] {
    while (!raw->stopping_.load())
      rd_kafka_poll(raw->rk_.get(), 50);
  }};
  return out;
}

output_writer::~output_writer() {
  close(std::chrono::seconds(10));
}

rd_kafka_resp_err_t output_writer::write(std::string_view key,
                                         std::string_view value,
                                         const std::vector<header>& headers,
                                         output_ticket ticket) {
  auto t = std::make_unique<output_ticket>(std::move(ticket));
  for (;;) {
    auto hdrs = rdkafka::new_headers(headers.size());
    for (const auto& [name, val] : headers)
      rd_kafka_header_add(hdrs.get(), name.data(),
                          static_cast<ssize_t>(name.size()), val.data(),
                          static_cast<ssize_t>(val.size()));
    auto err = rd_kafka_producev(
      rk_.get(), RD_KAFKA_V_RKT(topic_.get()),
      RD_KAFKA_V_KEY(key.empty() ? nullptr : key.data(), key.size()),
      // An empty value, never a null one: on a compacted topic a null
      // value is Kafka's delete marker and would erase the key's results.
      RD_KAFKA_V_VALUE(const_cast<char*>(value.empty() ? "" : value.data()),
                       value.size()),
      RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY),
      RD_KAFKA_V_HEADERS(hdrs.get()), RD_KAFKA_V_OPAQUE(t.get()),
      RD_KAFKA_V_END);
    if (!err) {
      hdrs.release(); // the message owns them now
      t.release(); // the delivery report owns it now
      return err;
    }
    // Not taken over on failure: `hdrs` frees them.
    if (err != RD_KAFKA_RESP_ERR__QUEUE_FULL)
      return err;
    // The writer's thread serves deliveries and frees room; this waits,
    // which holds the runtime's output and so, through the window, pauses
    // the input partitions.
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

void output_writer::close(std::chrono::milliseconds timeout) {
  if (!rk_)
    return;
  stopping_ = true;
  if (poller_.joinable())
    poller_.join();
  rd_kafka_flush(rk_.get(), static_cast<int>(timeout.count()));
  // Records still queued are dropped: their delivery reports (with an
  // error) free their tickets, and their offsets were never committed.
  rd_kafka_purge(rk_.get(),
                 RD_KAFKA_PURGE_F_QUEUE | RD_KAFKA_PURGE_F_INFLIGHT);
  for (int i = 0; i < 100 && rd_kafka_outq_len(rk_.get()) > 0; ++i)
    rd_kafka_poll(rk_.get(), 10);
  topic_.reset();
  rk_.reset();
}

} // namespace keylane::kafka
