// SPDX-License-Identifier: Apache-2.0
#include "keylane/errc.hpp"

#include <caf/message.hpp>

namespace keylane {

const char* to_string(errc x) noexcept {
  switch (x) {
    case errc::none: return "none";
    case errc::window_full: return "window_full";
    case errc::key_backlog_full: return "key_backlog_full";
    case errc::stopped: return "stopped";
    case errc::invalid_config: return "invalid_config";
    case errc::unreadable_config: return "unreadable_config";
    case errc::unknown_handler: return "unknown_handler";
    case errc::handler_failed: return "handler_failed";
    case errc::timeout: return "timeout";
    case errc::startup_failed: return "startup_failed";
    case errc::codec_failed: return "codec_failed";
    case errc::park_store_failed: return "park_store_failed";
    case errc::spill_failed: return "spill_failed";
    case errc::config_too_large: return "config_too_large";
    case errc::state_store_failed: return "state_store_failed";
    case errc::messages_full: return "messages_full";
    case errc::ask_timeout: return "ask_timeout";
    case errc::ask_failed: return "ask_failed";
    case errc::timers_full: return "timers_full";
  }
  return "unknown";
}

namespace {

// What a code means, for std::error_code::message(); to_string(errc) stays
// the stable name (in --json fields and logs).
const char* describe(errc x) noexcept {
  switch (x) {
    case errc::none: return "no error";
    case errc::window_full:
      return "the window of accepted, undelivered events is full";
    case errc::key_backlog_full:
      return "the key's backlog of unfinished events is full";
    case errc::stopped: return "the runtime is stopped or stopping";
    case errc::invalid_config: return "invalid config";
    case errc::unreadable_config: return "config file could not be read";
    case errc::unknown_handler: return "handler not registered";
    case errc::handler_failed: return "the handler failed";
    case errc::timeout: return "a bounded wait ran out of time";
    case errc::startup_failed: return "the actor system could not start";
    case errc::codec_failed: return "payload encoding or decoding failed";
    case errc::park_store_failed: return "park store failure";
    case errc::spill_failed: return "sink spill file failure";
    case errc::config_too_large: return "config file too large";
    case errc::state_store_failed: return "keyed-state store failure";
    case errc::messages_full:
      return "too many messages between keys in flight";
    case errc::ask_timeout: return "an ask got no answer in time";
    case errc::ask_failed: return "the asked key's event ended without a result";
    case errc::timers_full: return "too many timers pending";
  }
  return "unknown keylane error";
}

class errc_category final : public std::error_category {
public:
  const char* name() const noexcept override {
    return "keylane";
  }

  std::string message(int code) const override {
    if (code < 0 || code > 255)
      return "unknown keylane error";
    return describe(static_cast<errc>(code));
  }
};

} // namespace

const std::error_category& error_category() noexcept {
  static const errc_category instance;
  return instance;
}

std::error_code make_error_code(errc x) noexcept {
  return {static_cast<int>(x), error_category()};
}

std::error_code to_error_code(const caf::error& err) noexcept {
  if (!err)
    return {};
  if (err.category() != caf::atom("keylane"))
    return std::make_error_code(std::errc::io_error);
  return make_error_code(static_cast<errc>(err.code()));
}

caf::error make_error(errc x, std::string message) {
  return caf::error{static_cast<uint8_t>(x), caf::atom("keylane"),
                    caf::make_message(std::move(message))};
}

std::string render(const caf::error& err) {
  if (!err)
    return "none";
  if (err.category() != caf::atom("keylane"))
    return caf::to_string(err);
  std::string out = to_string(static_cast<errc>(err.code()));
  const auto& ctx = err.context();
  if (ctx.size() == 1 && ctx.match_element<std::string>(0)
      && !ctx.get_as<std::string>(0).empty()) {
    out += ": ";
    out += ctx.get_as<std::string>(0);
  }
  return out;
}

} // namespace keylane
