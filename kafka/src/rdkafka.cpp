// SPDX-License-Identifier: Apache-2.0
#include "rdkafka.hpp"

#include <librdkafka/rdkafka_mock.h>

#include "keylane/errc.hpp"

namespace keylane::kafka {

void detail::rdkafka_client_deleter::operator()(rd_kafka_t* rk) const noexcept {
  rd_kafka_destroy(rk);
}

void detail::rdkafka_mock_deleter::operator()(
  rd_kafka_mock_cluster_t* mc) const noexcept {
  rd_kafka_mock_cluster_destroy(mc);
}

namespace rdkafka {

std::optional<std::string> set(rd_kafka_conf_t& conf, const std::string& name,
                               const std::string& value) {
  char err[512];
  if (rd_kafka_conf_set(&conf, name.c_str(), value.c_str(), err, sizeof err)
      == RD_KAFKA_CONF_OK)
    return std::nullopt;
  return std::string{err};
}

caf::error set(rd_kafka_conf_t& conf, const std::string& name,
               const std::string& value, const std::string& origin,
               const char* what) {
  auto why = set(conf, name, value);
  if (!why)
    return caf::none;
  return make_error(errc::invalid_config,
                    origin + ": " + what + " property " + name + " = \""
                      + value + "\": " + *why);
}

client_ptr new_client(rd_kafka_type_t type, conf_ptr conf, std::string& why) {
  char err[512];
  client_ptr rk{rd_kafka_new(type, conf.get(), err, sizeof err)};
  if (rk)
    conf.release(); // the client owns it now
  else
    why = err;
  return rk;
}

caf::expected<client_ptr> new_client(rd_kafka_type_t type, conf_ptr conf,
                                     const std::string& what) {
  std::string why;
  auto rk = new_client(type, std::move(conf), why);
  if (!rk)
    return make_error(errc::startup_failed, what + ": " + why);
  return rk;
}

} // namespace rdkafka

} // namespace keylane::kafka
