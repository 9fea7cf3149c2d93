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
  }
  return "unknown";
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
