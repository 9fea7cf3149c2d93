// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <type_traits>
#include <typeindex>
#include <vector>

#include <caf/expected.hpp>

#include "keylane/config.hpp"
#include "keylane/errc.hpp"
#include "keylane/handler.hpp"

namespace keylane {

/// Builds one handler instance for one lane from the handler's config table.
using handler_factory =
  std::function<std::unique_ptr<handler_base>(const handler_params&)>;

/// Handlers by name, so the config file can pick one (`[handler] name`).
/// Fill it before starting runtimes; lookups are then safe from any thread.
class handler_registry {
public:
  /// Registers `Handler` as `name`. `Handler` derives from
  /// `handler<P, R>` and is constructible from `const handler_params&`
  /// (to read its table) or by default.
  template <class Handler>
  void add(std::string name) {
    static_assert(std::is_base_of_v<handler_base, Handler>,
                  "Handler must derive from keylane::handler<P, R>");
    using p = typename Handler::payload_type;
    using r = typename Handler::result_type;
    handler_factory f;
    if constexpr (std::is_constructible_v<Handler, const handler_params&>)
      f = [](const handler_params& x) { return std::make_unique<Handler>(x); };
    else
      f = [](const handler_params&) { return std::make_unique<Handler>(); };
    add(std::move(name), typeid(p), typeid(r), std::move(f));
  }

  /// Registers a factory for payload and result types `p` and `r`.
  void add(std::string name, std::type_index p, std::type_index r,
           handler_factory f);

  /// Finds `name` and checks its types; `errc::unknown_handler` otherwise.
  template <class Payload, class Result>
  [[nodiscard]] caf::expected<handler_factory>
  find(const std::string& name) const {
    return find(name, typeid(Payload), typeid(Result));
  }

  /// Untyped lookup behind `find<P, R>`.
  [[nodiscard]] caf::expected<handler_factory>
  find(const std::string& name, std::type_index p, std::type_index r) const;

  /// Registered names, sorted.
  [[nodiscard]] std::vector<std::string> names() const;

private:
  struct entry {
    std::type_index payload;
    std::type_index result;
    handler_factory make;
  };
  std::map<std::string, entry> entries_;
};

} // namespace keylane
