// SPDX-License-Identifier: Apache-2.0
#include "keylane/detail/handler_maker.hpp"

#include <exception>

namespace keylane::detail {

handler_maker::handler_maker(handler_factory make, handler_params params)
  : make_(std::move(make)), params_(std::move(params)) {}

std::unique_ptr<handler_base> handler_maker::make(std::string& why,
                                                  bool& retryable) {
  std::lock_guard<std::mutex> guard{mtx_};
  retryable = true;
  try {
    auto h = make_(params_);
    if (!h) {
      why = "the handler factory returned no handler";
      retryable = false;
    }
    return h;
  } catch (const std::exception& ex) {
    why = std::string{"handler construction threw: "} + ex.what();
  } catch (...) {
    why = "handler construction threw a non-standard exception";
  }
  return nullptr;
}

} // namespace keylane::detail
