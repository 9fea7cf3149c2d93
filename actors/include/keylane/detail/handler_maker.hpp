// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <memory>
#include <mutex>
#include <string>

#include "keylane/handler_registry.hpp"

namespace keylane::detail {

/// Builds handler instances with the user's factory. A lane builds its
/// instance on its shard's thread when it first has an event to run (and a
/// fresh one when activation failed and the event is retried); calls are
/// serialised, so a factory never runs on two threads at once.
class handler_maker {
public:
  handler_maker(handler_factory make, handler_params params);

  /// A new instance, or null with `why` saying what went wrong; `retryable`
  /// is false when retrying cannot help (the factory returned no handler).
  [[nodiscard]] std::unique_ptr<handler_base> make(std::string& why,
                                                   bool& retryable);

private:
  std::mutex mtx_;
  handler_factory make_;
  handler_params params_;
};

using handler_maker_ptr = std::shared_ptr<handler_maker>;

} // namespace keylane::detail
